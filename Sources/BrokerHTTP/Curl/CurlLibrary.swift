import BrokerCore
internal import CBrokerShims

/// libcurl, loaded at the first request rather than linked: a core process that makes no request
/// (the agent answering from its cache, `status`, a `token get` of a valid token) never maps
/// libcurl's dependency tree (about 6 MiB of RSS). CBrokerShims' `curl_library.c` holds the table.
enum CurlLibrary {
  /// Loads libcurl and runs `curl_global_init`, once per process (from any thread), before any
  /// other libcurl call; after the first success it returns at once. A failure is not kept: the
  /// next call tries again, so an agent works once the missing library is installed.
  /// - Throws: `HTTPError.libraryUnavailable` when `libcurl.so.4` or one of its functions is
  ///   missing, or `curl_global_init` fails.
  static func start() throws(HTTPError) {
    try withErrorBuffer { cbroker_curl_start($0, $1) }
  }

  /// Resolves every libcurl function tokenbroker calls from the library `name` (a soname or a
  /// path, as `dlopen` takes it) into a table of its own that nothing calls: the check `start`
  /// makes, for a library that is not the process's (the library stays loaded when it resolved).
  /// - Throws: `HTTPError.libraryUnavailable` naming the file or the missing symbol (dlerror's text).
  static func resolve(_ name: String) throws(HTTPError) {
    var api = cbroker_curl_api()
    try withErrorBuffer { cbroker_curl_resolve(name, &api, $0, $1) }
  }

  /// Runs `call` with a buffer for the loader's message; a non-zero result throws that message.
  private static func withErrorBuffer(_ call: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws(HTTPError) {
    let size = 512
    let error = UnsafeMutablePointer<CChar>.allocate(capacity: size)
    defer { error.deallocate() }
    error.initialize(repeating: 0, count: size)
    guard call(error, size) == 0 else { throw .libraryUnavailable(detail: String(cString: error)) }
  }
}
