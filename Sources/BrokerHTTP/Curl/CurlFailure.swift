import BrokerCore
internal import CBrokerShims
internal import CLibcurl

/// Maps a failed `curl_easy_perform` to an `HTTPError`.
enum CurlFailure {
  /// - Parameters:
  ///   - code: what `curl_easy_perform` returned (not `CURLE_OK`).
  ///   - host: the request's host, named in the error.
  ///   - url: the redacted URL (no query), for `.invalidURL`.
  ///   - message: libcurl's error buffer; used as the TLS detail, which it explains better than
  ///     `curl_easy_strerror` (it names the certificate problem, never a query or a body).
  static func error(
    for code: CURLcode, host: String, url: String, message: String, sink: ResponseSink
  ) -> HTTPError {
    switch code {
    case CURLE_WRITE_ERROR where sink.tooLarge:
      return .other(host: host, detail: "reply too large (over \(sink.limit) bytes)")
    case CURLE_ABORTED_BY_CALLBACK where sink.cancel.isSet:
      return cancelled(host)
    case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
      return .cannotResolve(host: host)
    case CURLE_COULDNT_CONNECT:
      return .cannotConnect(host: host)
    case CURLE_OPERATION_TIMEDOUT:
      return .timedOut(host: host)
    case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
      return .invalidURL(url)
    case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
      CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE,
      CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT,
      CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED,
      CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED:
      return .tls(host: host, detail: message.isEmpty ? text(of: code) : String(message.prefix(200)))
    default:
      return .other(host: host, detail: text(of: code))
    }
  }

  /// The error for a request whose task was cancelled.
  static func cancelled(_ host: String) -> HTTPError {
    .other(host: host, detail: "request cancelled")
  }

  /// libcurl's fixed text for `code` (no URL, no data).
  static func text(of code: CURLcode) -> String {
    String(cString: cbroker_easy_strerror(code))
  }
}
