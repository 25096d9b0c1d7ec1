import Foundation
import PinsetPublishing

/// In-process measurements for `Benchmarks/run`. Each subcommand prints one JSON object on standard output
/// and progress on standard error. Not a user-facing tool: BENCHMARKS.md describes the suite.
@main
enum Bench {
    static let usage = """
        usage: pinset-bench <command> [--option value ...]
          populate     --database LOCATION --customers N [--hosts 5] [--pins 3] [--batch N]
                                                                        add customers through the admin library (one
                                                                        transaction per row as the CLI does, or
                                                                        importCustomers, N customers per transaction)
          load         --database LOCATION [--repeat 3]                 time PinStore.allPinSets()
                       (LOCATION: a SQLite path or a postgres:// URL, password from PGPASSWORD;
                       --db FILE still names a SQLite file)
          sign-pass    --data-dir DIR --customers N[,N...] [--hosts 5] [--pins 3] [--repeat 3]
                       [--single-thread-sample 200] [--openssl N] [--work-dir DIR]
                       [--own-key-data-dir DIR [--own-every 2]]
                                                                        time SigningPass.run and openssl smime; with
                                                                        --own-key-data-dir also a mixed-key pass
          client       --data-dir DIR --hosts N [--pins 3] [--iterations 200] --work-dir DIR
                                                                        time BundleVerifier.verify and PinsetUpdater.update
          client-alloc --data-dir DIR --hosts N [--pins 3] --iterations K --mode verify|update --work-dir DIR
                                                                        K operations traced by glibc mtrace (with
                                                                        LD_PRELOAD=libc_malloc_debug.so.0 MALLOC_TRACE=FILE)
          dispatch-floor [--body-bytes 900]                             minimal Dispatch accept/respond/close server
                                                                        (prints its port; runs until killed)
          log-append   --database LOCATION --customers N --edits K [--batch 1000] [--hosts 5] [--pins 3]
                                                                        transparency log entries appended through
                                                                        the admin library (imports and single edits), then a
                                                                        publisher's rehash of the whole log
          log-sign-pass --data-dir DIR --database LOCATION [--repeat 5]  SigningPass.run over the store's customers
                                                                        with and without the log's advance/covers
          log-proof    --entries N --customers C --data-dir DIR --work-dir DIR [--witnesses 2] [--iterations 100]
                                                                        a generated log of N entries with real
                                                                        witnesses: rehash, proof size, client
                                                                        verification with and without a policy
          postgres     --passwords-file FILE                            the tests' PostgreSQL 15 cluster on a free
                                                                        loopback port: prints its port and pid, writes
                                                                        the passwords to FILE (0600), stops on SIGTERM
        """

    static func main() async {
        let arguments = CommandLine.arguments.dropFirst()
        guard let command = arguments.first else {
            Report.note(usage)
            exit(2)
        }
        do {
            let options = try Arguments(arguments.dropFirst())
            switch command {
            case "populate": try PopulateCommand.run(options)
            case "load": try LoadCommand.run(options)
            case "sign-pass": try SignPassCommand.run(options)
            case "client": try await ClientCommand.run(options)
            case "client-alloc": try await ClientCommand.runAllocationProbe(options)
            case "dispatch-floor":
                #if os(Linux)
                try DispatchFloorCommand.run(options)
                #else
                throw BenchError("dispatch-floor runs on Linux, where the benchmarks measure it.")
                #endif
            case "log-append": try TransparencyCommands.append(options)
            case "log-sign-pass": try TransparencyCommands.signPass(options)
            case "log-proof": try await TransparencyCommands.proof(options)
            case "postgres": try PostgresCommand.run(options)
            default:
                Report.note("unknown command '\(command)'\n\(usage)")
                exit(2)
            }
        } catch {
            Report.note("\(command) failed: \(error)")
            exit(1)
        }
    }
}
