import Foundation

/// The fuzzers' committed inputs, replayed by the normal test suite: every file kept in
/// `Fuzz/regressions/<target>/` after a fix, then the seed corpus in `Fuzz/corpus/<target>/`.
public enum FuzzInputs {
    public static func paths(for target: String) -> [String] {
        var paths: [String] = []
        for kind in ["regressions", "corpus"] {
            let directory = SourceTree.path("Fuzz/\(kind)/\(target)")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            paths += names.filter { !$0.hasPrefix(".") }.sorted().map { "\(directory)/\($0)" }
        }
        return paths
    }
}
