#if canImport(Glibc)
import Glibc
#endif
import Foundation
import PinsetTestSupport
import Testing

/// Two `pinset serve` instances sharing one key and database file behind a real nginx: clients keep getting
/// valid, fresh bundles when one instance stops.
@Suite(.serialized) struct LoadBalancerTests {
    @Test(arguments: ServerTransports.all)
    func clientsKeepGettingFreshBundlesWhenAnInstanceStops(_ transport: String) throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let first = try RunningServer(cli: cli, extraConfiguration: ["transport": transport])
        let second = try RunningServer(cli: cli, extraConfiguration: ["transport": transport])
        defer {
            first.stop()
            second.stop()
        }
        let nginx = try NginxLoadBalancer(upstreamPorts: [first.port, second.port], in: cli.directory)
        defer { nginx.stop() }

        func fetchAndVerify(_ label: String) throws {
            let response = try CurlResponse.get("\(nginx.baseURL)/acme.json.signed", in: cli.directory)
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
        #expect(try CurlResponse.get("\(nginx.baseURL)/readyz", in: cli.directory).status == 200)
    }

    static let streamModule = "/usr/lib/nginx/modules/ngx_stream_module.so"

    /// nginx's stream proxy with `proxy_protocol on` (as in deploy/nginx/pinset-lb.conf) in front of an instance
    /// with `"proxyProtocol": true`: the instance logs the client's own address, not nginx's.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: streamModule), "needs nginx's stream module (libnginx-mod-stream)"),
          arguments: ServerTransports.all)
    func proxyProtocolCarriesTheClientAddressThroughNginx(_ transport: String) throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli, extraConfiguration: ["proxyProtocol": true, "maxConnectionsPerAddress": 4, "transport": transport])
        defer { server.stop() }
        let nginx = try NginxLoadBalancer(in: cli.directory) { prefix, port in
            """
            load_module \(Self.streamModule);
            \(NginxLoadBalancer.userDirective)
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
            """
        }
        defer { nginx.stop() }

        let response = try CurlResponse.get("\(nginx.baseURL)/acme.json.signed", ["--interface", "127.0.0.5"], in: cli.directory)
        #expect(response.status == 200)
        let logged = { server.process.stdout + server.process.stderr }
        #expect(server.process.waitFor(timeout: 30) { logged().contains("127.0.0.5") }, "the access log lacks the client address: \(logged())")

        // Straight to the instance, without the header: closed unanswered.
        let direct = try RawClient.exchange(port: server.port, Array("GET /acme.json.signed HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(direct.response.isEmpty)
        #expect(direct.closed)
    }

    /// A peer that reaches the instance directly and writes a PROXY header naming a client of its choosing, where
    /// `trustedProxies` names the balancer: closed unanswered and counted. The balancer's own connections (here curl
    /// from the balancer's address, sending the header as haproxy does) are served and see the count.
    @Test func onlyTheTrustedBalancerMayNameTheClient() throws {
        let cli = try ServeEndToEndTests().populated()
        defer { cli.remove() }
        let server = try RunningServer(cli: cli, extraConfiguration: ["proxyProtocol": true, "trustedProxies": ["127.0.0.2"]])
        defer { server.stop() }
        let direct = try RawClient.exchange(port: server.port, Array("PROXY TCP4 203.0.113.7 127.0.0.1 51000 443\r\nGET /acme.json.signed HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
        #expect(direct.response.isEmpty && direct.closed)
        let bundle = try CurlResponse.get("http://127.0.0.1:\(server.port)/acme.json.signed", ["--haproxy-protocol", "--interface", "127.0.0.2"], in: cli.directory)
        #expect(bundle.status == 200)
        let metrics = try CurlResponse.get("http://127.0.0.1:\(server.port)/metrics", ["--haproxy-protocol", "--interface", "127.0.0.2"], in: cli.directory)
        #expect(String(decoding: metrics.body, as: UTF8.self).contains(#"pinset_http_connections_refused_total{reason="untrusted_proxy"} 1"#),
                "\(String(decoding: metrics.body, as: UTF8.self).split(separator: "\n").filter { $0.contains("refused") })")
    }
}
