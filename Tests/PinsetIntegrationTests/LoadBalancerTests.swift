#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// Two `pinset serve` instances sharing one key and database file behind a real nginx: clients keep getting
/// valid, fresh bundles when one instance stops.
@Suite(.serialized) struct LoadBalancerTests {
    static func nginxConfiguration(prefix: String, listenPort: Int, upstreamPorts: [Int]) -> String {
        // Workers of a root-started nginx drop to `nobody`, which cannot enter the test's private temp dir.
        let user = geteuid() == 0 ? "user root;" : ""
        return """
        \(user)
        worker_processes 1;
        pid \(prefix)/nginx.pid;
        error_log \(prefix)/error.log warn;
        events { worker_connections 256; }
        http {
            access_log \(prefix)/access.log;
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
                    proxy_cache pinset;
                    proxy_cache_revalidate on;
                }
                location = /readyz { proxy_pass http://pinset; }
                location / { return 404; }
            }
        }
        """
    }

    @Test func clientsKeepGettingFreshBundlesWhenAnInstanceStops() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let first = try RunningServer(cli: cli)
        let second = try RunningServer(cli: cli)
        defer {
            first.stop()
            second.stop()
        }
        let prefix = cli.directory.file("nginx")
        try FileManager.default.createDirectory(atPath: prefix, withIntermediateDirectories: true)
        let port = try FreePort.pick()
        let configPath = try cli.directory.write("nginx.conf", Self.nginxConfiguration(prefix: prefix, listenPort: port, upstreamPorts: [first.port, second.port]))
        let nginx = try BackgroundProcess("/usr/sbin/nginx", ["-c", configPath, "-p", prefix, "-g", "daemon off;"], logDirectory: cli.directory.path, name: "nginx")
        defer { nginx.stop(signal: SIGQUIT) }
        #expect(FreePort.waitUntilListening(port: port), "nginx did not start: \(nginx.stderr)")

        func fetchAndVerify(_ label: String) throws {
            let response = try CurlResponse.get("http://127.0.0.1:\(port)/acme.json.signed", in: cli.directory)
            #expect(response.status == 200, "\(label): status \(response.status)")
            let path = try cli.directory.write("lb.signed", response.body)
            let verified = try ProcessRunner.run("openssl", ["smime", "-verify", "-inform", "der", "-in", path, "-CAfile", cli.trustCertificate])
            #expect(verified.status == 0, "\(label): \(verified.stderr)")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(verified.stdout)) as? [String: Any])
            let timestamp = try #require((object["timestamp"] as? NSNumber)?.int64Value)
            #expect(timestamp + 600 >= Int64(Date().timeIntervalSince1970), "\(label): stale bundle")
        }

        for i in 0..<6 { try fetchAndVerify("both up #\(i)") }
        #expect(first.stop() == 0)
        for i in 0..<10 { try fetchAndVerify("one stopped #\(i)") }
        // Both instances served and the shared database was edited while they ran.
        #expect(try cli.run(["customer", "add", "globex"]).status == 0)
        #expect(try CurlResponse.get("http://127.0.0.1:\(port)/readyz", in: cli.directory).status == 200)
    }

    static let streamModule = "/usr/lib/nginx/modules/ngx_stream_module.so"

    /// nginx's stream proxy with `proxy_protocol on` (as in deploy/nginx/pinset-lb.conf) in front of an instance
    /// with `"proxyProtocol": true`: the instance logs the client's own address, not nginx's.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: streamModule), "needs nginx's stream module (libnginx-mod-stream)"))
    func proxyProtocolCarriesTheClientAddressThroughNginx() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli, extraConfiguration: ["proxyProtocol": true, "maxConnectionsPerAddress": 4])
        defer { server.stop() }
        let prefix = cli.directory.file("nginx-stream")
        try FileManager.default.createDirectory(atPath: prefix, withIntermediateDirectories: true)
        let port = try FreePort.pick()
        let user = geteuid() == 0 ? "user root;" : ""
        let configPath = try cli.directory.write("nginx-stream.conf", """
            load_module \(Self.streamModule);
            \(user)
            worker_processes 1;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/error.log warn;
            events { worker_connections 64; }
            stream {
                server {
                    listen 127.0.0.1:\(port);
                    proxy_pass 127.0.0.1:\(server.port);
                    proxy_protocol on;
                    proxy_connect_timeout 1s;
                }
            }
            """)
        let nginx = try BackgroundProcess("/usr/sbin/nginx", ["-c", configPath, "-p", prefix, "-g", "daemon off;"], logDirectory: cli.directory.path, name: "nginx-stream")
        defer { nginx.stop(signal: SIGQUIT) }
        #expect(FreePort.waitUntilListening(port: port), "nginx did not start: \(nginx.stderr)")

        let response = try CurlResponse.get("http://127.0.0.1:\(port)/acme.json.signed", ["--interface", "127.0.0.5"], in: cli.directory)
        #expect(response.status == 200)
        let logged = { server.process.stdout + server.process.stderr }
        #expect(server.process.waitFor(timeout: 5) { logged().contains("127.0.0.5") }, "the access log lacks the client address: \(logged())")

        // Straight to the instance, without the header: closed unanswered.
        let direct = try RawClient.exchange(port: server.port, Array("GET /acme.json.signed HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(direct.response.isEmpty)
        #expect(direct.closed)
    }
}
