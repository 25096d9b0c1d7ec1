extension ServerStatus {
    /// The transparency log the server publishes: the checkpoint it serves and, with witnesses, whether they cosign.
    public struct TransparencyLog: Codable, Hashable, Sendable {
        public var origin: String
        /// The log's verifier key, as apps and witnesses configure it.
        public var verifierKey: String
        /// The size and root hash of the checkpoint served; absent before the first one.
        public var checkpointSize: UInt64?
        public var rootHash: String?
        /// Entries the served checkpoint does not cover yet: content waiting for the witnesses' cosignatures.
        public var entriesAwaitingWitnesses: UInt64
        /// The witnesses that cosigned the latest size, and why the others did not.
        public var witnessesCosigned: [String]
        public var witnessFailures: [String: String]

        public init(
            origin: String, verifierKey: String, checkpointSize: UInt64?, rootHash: String?, entriesAwaitingWitnesses: UInt64,
            witnessesCosigned: [String], witnessFailures: [String: String]
        ) {
            self.origin = origin
            self.verifierKey = verifierKey
            self.checkpointSize = checkpointSize
            self.rootHash = rootHash
            self.entriesAwaitingWitnesses = entriesAwaitingWitnesses
            self.witnessesCosigned = witnessesCosigned
            self.witnessFailures = witnessFailures
        }
    }
}
