extension WitnessRefusal {
    /// A refusal a witness decides outside ``WitnessCheckpointValidator``: a request body that is too large or does
    /// not parse (400), or a checkpoint the witness will not look at before it reaches the validator.
    public init(_ kind: Kind, _ reason: String) {
        self.init(kind: kind, reason: reason)
    }
}
