/// The walk up the tree that RFC 9162 §2.1.3.2 (inclusion) and §2.1.4.2 (consistency) verification share: from node
/// `fn` of a level whose last node is `sn`, each proof hash is a left or a right sibling of the hash folded so far.
struct ProofPathWalk {
    enum Side {
        /// The proof hash goes on the left: `hash(proof hash || folded)`.
        case left
        /// The proof hash goes on the right: `hash(folded || proof hash)`.
        case right
    }

    private var fn: UInt64
    private var sn: UInt64

    init(fn: UInt64, sn: UInt64) {
        self.fn = fn
        self.sn = sn
    }

    /// Where the next proof hash goes; nil when the walk already reached the root, so the proof is too long.
    mutating func next() -> Side? {
        guard sn != 0 else { return nil }
        let side: Side = fn & 1 == 1 || fn == sn ? .left : .right
        if side == .left && fn & 1 == 0 {
            while fn & 1 == 0 && fn != 0 {
                fn >>= 1
                sn >>= 1
            }
        }
        fn >>= 1
        sn >>= 1
        return side
    }

    /// Whether the walk reached the root; false after the last proof hash means the proof is too short.
    var reachedRoot: Bool { sn == 0 }
}
