#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport

/// A real nginx on a free loopback port in front of `pinset serve` instances, stopped by its pid: the HTTP
/// balancer of deploy/nginx/pinset-lb.conf, or whatever configuration a test gives.
final class NginxLoadBalancer {
    let process: BackgroundProcess
    let port: Int
    let prefix: String

    /// One proxied request as the access log records it: nginx's answer, then each upstream nginx tried
    /// (a failed or 503 attempt is followed by the next instance) with its status.
    struct LoggedRequest {
        let status: Int
        let upstreams: [(address: String, status: String)]
    }

    /// The HTTP balancer across `upstreamPorts`.
    /// - Parameter caching: nginx's cache as deployed (on, bounded by `Cache-Control`); off, every request
    ///   reaches an instance.
    convenience init(upstreamPorts: [Int], in directory: TemporaryDirectory, caching: Bool = true) throws {
        try self.init(in: directory) { prefix, port in
            Self.configuration(prefix: prefix, listenPort: port, upstreamPorts: upstreamPorts, caching: caching)
        }
    }

    /// nginx with the configuration `configuration(prefix, port)` gives, which must listen on 127.0.0.1:`port`.
    init(in directory: TemporaryDirectory, configuration: (_ prefix: String, _ port: Int) -> String) throws {
        let name = "nginx-\(UUID().uuidString.prefix(6))"
        prefix = directory.file(name)
        try FileManager.default.createDirectory(atPath: prefix, withIntermediateDirectories: true)
        port = try FreePort.pick()
        let configPath = try directory.write("\(name).conf", configuration(prefix, port))
        process = try BackgroundProcess("/usr/sbin/nginx", ["-c", configPath, "-p", prefix, "-g", "daemon off;"], logDirectory: directory.path, name: name)
        guard FreePort.waitUntilListening(port: port) else {
            stop()
            throw Failure("nginx did not start: \(process.stderr)")
        }
    }

    /// `user root;` where the test runs as root: workers of a root-started nginx drop to `nobody`, which cannot
    /// enter the test's private temp dir.
    static var userDirective: String { geteuid() == 0 ? "user root;" : "" }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// SIGQUIT: nginx finishes the requests in flight, then exits.
    func stop() { process.stop(signal: SIGQUIT) }

    /// Every request logged so far.
    func accessLog() -> [LoggedRequest] {
        let text = (try? String(contentsOfFile: "\(prefix)/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            // `$status|$upstream_addr|$upstream_status`; upstream lists are ", "-separated.
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3, let status = Int(fields[0]) else { return nil }
            let addresses = fields[1].components(separatedBy: ", ")
            let statuses = fields[2].components(separatedBy: ", ")
            return LoggedRequest(status: status, upstreams: Array(zip(addresses, statuses)))
        }
    }

    static func configuration(prefix: String, listenPort: Int, upstreamPorts: [Int], caching: Bool) -> String {
        let cache = caching ? "proxy_cache pinset; proxy_cache_revalidate on;" : ""
        return """
        \(userDirective)
        worker_processes 1;
        pid \(prefix)/nginx.pid;
        error_log \(prefix)/error.log warn;
        events { worker_connections 256; }
        http {
            log_format upstreams '$status|$upstream_addr|$upstream_status';
            access_log \(prefix)/access.log upstreams;
            client_body_temp_path \(prefix)/client_body;
            proxy_temp_path \(prefix)/proxy;
            fastcgi_temp_path \(prefix)/fastcgi;
            uwsgi_temp_path \(prefix)/uwsgi;
            scgi_temp_path \(prefix)/scgi;
            proxy_cache_path \(prefix)/cache levels=1:2 keys_zone=pinset:1m max_size=10m inactive=10m use_temp_path=off;
            upstream pinset {
                \(upstreamPorts.map { "server 127.0.0.1:\($0) max_fails=1 fail_timeout=5s;" }.joined(separator: "\n            "))
                keepalive 8;
            }
            server {
                listen 127.0.0.1:\(listenPort);
                location ~ "^/[A-Za-z0-9][A-Za-z0-9._-]{0,63}\\.json\\.signed$" {
                    proxy_pass http://pinset;
                    proxy_http_version 1.1;
                    proxy_set_header Connection "";
                    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                    proxy_next_upstream error timeout http_502 http_503 http_504;
                    proxy_connect_timeout 1s;
                    \(cache)
                }
                location = /readyz { proxy_pass http://pinset; }
                location / { return 404; }
            }
        }
        """
    }
}
