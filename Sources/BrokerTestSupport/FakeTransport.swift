import BrokerCore
import Synchronization

/// An `HTTPTransport` that answers from a closure or a script and records every request.
public final class FakeTransport: HTTPTransport, Sendable {
  /// Answers request number `index` (0-based); throw an `HTTPError` to fake a network failure.
  public typealias Handler = @Sendable (_ request: HTTPRequest, _ index: Int) async throws -> HTTPResponse

  /// One scripted answer.
  public enum Reply: Sendable {
    case response(HTTPResponse)
    case failure(HTTPError)

    /// A JSON answer.
    public static func json(_ body: String, status: Int = 200, headers: [HTTPHeader] = []) -> Reply {
      .response(.json(body, status: status, headers: headers))
    }
    /// A non-JSON answer, e.g. a proxy's HTML error page.
    public static func text(_ body: String, status: Int, contentType: String = "text/html") -> Reply {
      .response(HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", contentType)], body: Array(body.utf8)))
    }
  }

  private let handler: Handler
  private let recorded = Mutex<[HTTPRequest]>([])

  public init(handler: @escaping Handler) { self.handler = handler }

  /// Answers the requests in order with `script`; a request beyond its end fails with
  /// `HTTPError.other` ("no scripted reply").
  public convenience init(_ script: [Reply]) {
    self.init { request, index in
      guard index < script.count else {
        throw HTTPError.other(host: EndpointURL(request.url)?.host ?? "?", detail: "no scripted reply")
      }
      switch script[index] {
      case .response(let response): return response
      case .failure(let error): throw error
      }
    }
  }

  /// Every request sent so far, in order.
  public var requests: [HTTPRequest] { recorded.withLock { $0 } }

  public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
    let index = recorded.withLock {
      $0.append(request)
      return $0.count - 1
    }
    return try await handler(request, index)
  }
}

extension HTTPResponse {
  /// A response with a JSON body and `Content-Type: application/json`.
  public static func json(_ body: String, status: Int = 200, headers: [HTTPHeader] = []) -> HTTPResponse {
    HTTPResponse(
      status: status, headers: [HTTPHeader("Content-Type", "application/json")] + headers, body: Array(body.utf8))
  }
}

extension HTTPRequest {
  /// The `application/x-www-form-urlencoded` body decoded (`+` is a space, `%XX` a byte); a
  /// repeated name keeps its last value.
  public var formFields: [String: String] {
    FormEncoding.parameters(String(decoding: body, as: UTF8.self)).compactMapValues(\.last)
  }

  /// The body as text (tests only: it may hold secrets).
  public var bodyText: String { String(decoding: body, as: UTF8.self) }

}
