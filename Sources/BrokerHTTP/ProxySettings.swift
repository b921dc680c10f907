/// Proxy settings read from a given environment as libcurl reads the process's (libcurl's
/// `CURLOPT_PROXY` documentation, "Environment variables"): for `https://`, `https_proxy`, then
/// `HTTPS_PROXY`; for `http://`, `http_proxy` only (never `HTTP_PROXY`, which a CGI request could
/// set); then `all_proxy`, `ALL_PROXY`; hosts that bypass them in `no_proxy`, then `NO_PROXY`. An
/// empty value counts as unset.
struct ProxySettings: Sendable, Equatable {
  var https: String
  var http: String
  var noProxy: String

  init(environment: [String: String]) {
    func first(_ names: [String]) -> String {
      names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? ""
    }
    let all = first(["all_proxy", "ALL_PROXY"])
    let https = first(["https_proxy", "HTTPS_PROXY"])
    let http = first(["http_proxy"])
    self.https = https.isEmpty ? all : https
    self.http = http.isEmpty ? all : http
    noProxy = first(["no_proxy", "NO_PROXY"])
  }

  /// The proxy URL for a request of `scheme` (`https` or `http`), or empty for none.
  func proxy(scheme: String) -> String { scheme == "http" ? http : https }
}
