/// A started server's listener and workers, whatever their loop type: ``SocketServer`` keeps it to shut them
/// down, the only calls that go through the existential.
protocol RunningTransport: Sendable {
    /// Returns once the listening descriptor is closed, so new connections are refused.
    func stopAccepting() async
    func beginDraining() async
    func closeAll() async
    /// Ends every worker's loop.
    func stop() async
}

struct TransportGroup<Loop: ReadinessLoop>: RunningTransport {
    let listener: TransportListener<Loop>
    let workers: [TransportWorker<Loop>]

    /// Creates the workers and the listener on the listening socket `fd` and starts them; closes `fd` and throws if
    /// a worker's loop cannot be created.
    init(fd: Int32, configuration: SocketServerConfiguration, handler: any HTTPRequestHandler,
         onRequest: @escaping @Sendable (AccessLogEntry) -> Void, accessLog: AccessLog?, counter: ConnectionCounter,
         onLimit: (@Sendable (ConnectionLimitEvent) -> Void)?) throws(SocketServerError) {
        let admission = ConnectionAdmission<Loop>(maxPerAddress: configuration.maxConnectionsPerAddress)
        var workers: [TransportWorker<Loop>] = []
        do throws(SocketServerError) {
            for index in 0..<max(1, configuration.workerQueues) {
                workers.append(try TransportWorker<Loop>(
                    index: index, configuration: configuration, handler: handler, onRequest: onRequest,
                    accessLog: accessLog, counter: counter, admission: admission, onLimit: onLimit))
            }
        } catch {
            TransportSocket.closeListening(fd)
            throw error
        }
        workers.forEach { $0.start() }
        listener = TransportListener<Loop>(fd: fd, workers: workers, counter: counter,
                                           maxConnections: configuration.maxConnections, admission: admission,
                                           proxyProtocol: configuration.proxyProtocol,
                                           trustedProxies: configuration.proxyProtocol ? configuration.trustedProxies : nil, onLimit: onLimit)
        listener.start()
        self.workers = workers
    }

    func stopAccepting() async {
        await listener.stop()
    }

    func beginDraining() async {
        for worker in workers { await worker.perform { $0.beginDraining() } }
    }

    func closeAll() async {
        for worker in workers { await worker.perform { $0.closeAll() } }
    }

    func stop() async {
        for worker in workers { await worker.perform { $0.stop() } }
    }
}
