public import BrokerCore
import Dispatch
import Synchronization

/// `HTTPTransport` over libcurl, which is loaded at the first request (`CurlLibrary`), not linked.
///
/// Each request gets its own easy handle on its own Dispatch thread (an overcommit serial queue),
/// so `curl_easy_perform` never blocks Swift's cooperative pool; the caller awaits a continuation.
///
/// Policy, whatever the request says:
/// - only `https://`, and `http://` for loopback hosts; no redirects are followed (a 3xx is returned);
/// - TLS peer and host verification always on; `caFiles` are trusted in addition to the system store;
/// - proxies come from the environment as libcurl reads them (`https_proxy`, `http_proxy`,
///   `HTTPS_PROXY`, `ALL_PROXY`, `no_proxy`): the `environment` given (a command the agent runs for
///   a caller has the caller's), else the process's; loopback hosts are always reached directly;
/// - a reply body larger than 4 MiB is refused.
public struct CurlTransport: HTTPTransport {
  /// Reply bodies above this many bytes fail with `HTTPError.other(... "reply too large")`.
  public static let maxBodyBytes = 4 * 1024 * 1024

  /// The `User-Agent` sent unless the request sets one.
  public let userAgent: String
  /// The proxy settings to use, or nil for libcurl's reading of the process environment.
  let proxies: ProxySettings?

  /// - Parameters:
  ///   - userAgent: the `User-Agent` header value; control characters are dropped.
  ///   - environment: the variables to read the proxy settings from (`ProxySettings`), or nil for
  ///     the process's own.
  public init(userAgent: String = "tokenbroker", environment: [String: String]? = nil) {
    self.userAgent = String(userAgent.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
    proxies = environment.map(ProxySettings.init(environment:))
  }

  /// The libcurl and TLS library versions, for example `libcurl/7.88.1 OpenSSL/3.0.11`; loads
  /// libcurl if no request has yet, and says `libcurl (could not be loaded: …)` when it cannot.
  public static var libraryVersion: String { EasyHandle.libraryVersion }

  /// Sends `request` and returns the response, whatever its HTTP status.
  ///
  /// `request.connectTimeout` and `request.totalTimeout` are in seconds (values below 1 count as 1).
  /// - Throws: `HTTPError`, only when no HTTP response was received:
  ///   - `.invalidURL` when the URL is not `http(s)://host…` (before any network traffic);
  ///   - `.insecureURL` for `http://` to a non-loopback host (before any network traffic);
  ///   - `.cannotResolve` when DNS fails for the host or the proxy;
  ///   - `.cannotConnect` when the host or proxy refuses or cannot be reached;
  ///   - `.tls` when the handshake or certificate verification fails;
  ///   - `.timedOut` when `connectTimeout` or `totalTimeout` passes;
  ///   - `.libraryUnavailable` when libcurl (`libcurl.so.4`, loaded at the first request, not at
  ///     start) or one of its functions is missing (before any network traffic);
  ///   - `.other` for an unreadable CA file, a reply over 4 MiB, a cancelled task, and any other
  ///     libcurl failure. No error carries the body, a header value or the URL query.
  public func send(_ request: HTTPRequest) async throws(HTTPError) -> HTTPResponse {
    let plan = try RequestPlan(request, userAgent: userAgent, proxies: proxies)
    let cancel = CancelFlag()
    let result = await withTaskCancellationHandler {
      await withCheckedContinuation { (done: CheckedContinuation<Result<HTTPResponse, HTTPError>, Never>) in
        // A serial queue targets an overcommit root queue: a thread of its own when needed.
        DispatchQueue(label: "tokenbroker.curl").async {
          done.resume(returning: EasyHandle.perform(plan, cancel: cancel))
        }
      }
    } onCancel: {
      cancel.set()
    }
    return try result.get()
  }
}

/// Set when the awaiting task is cancelled; polled by the transfer's progress callback.
final class CancelFlag: Sendable {
  private let flag = Atomic<Bool>(false)
  func set() { flag.store(true, ordering: .releasing) }
  var isSet: Bool { flag.load(ordering: .acquiring) }
}
