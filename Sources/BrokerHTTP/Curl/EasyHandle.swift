// The only file that holds libcurl handles and raw pointers. Everything here runs on the transfer
// thread of one request; each C allocation is released by a `defer` in the scope that made it.
import BrokerCore
internal import CBrokerShims
internal import CLibcurl

enum EasyHandle {
  /// `libcurl/7.88.1 OpenSSL/3.0.11`, or why libcurl could not be loaded.
  static var libraryVersion: String {
    do { try CurlLibrary.start() } catch .libraryUnavailable(let detail) {
      return "libcurl (could not be loaded: \(detail))"
    } catch { return "libcurl" }
    guard let info = cbroker_curl_version_info() else { return "libcurl" }
    var text = "libcurl/" + String(cString: info.pointee.version)
    if let tls = info.pointee.ssl_version { text += " " + String(cString: tls) }
    return text
  }

  /// The system CA bundle libcurl was built with, else (also when libcurl cannot be loaded) Debian's.
  static var systemCAPath: String {
    if (try? CurlLibrary.start()) != nil, let info = cbroker_curl_version_info(), let path = info.pointee.cainfo {
      return String(cString: path)
    }
    return "/etc/ssl/certs/ca-certificates.crt"
  }

  /// Runs `plan` to completion on the calling thread (which must not be a Swift concurrency thread).
  static func perform(_ plan: RequestPlan, cancel: CancelFlag) -> Result<HTTPResponse, HTTPError> {
    Result { () throws(HTTPError) in try run(plan, cancel: cancel) }
  }

  private static func run(_ plan: RequestPlan, cancel: CancelFlag) throws(HTTPError) -> HTTPResponse {
    guard !cancel.isSet else { throw CurlFailure.cancelled(plan.host) }
    try CurlLibrary.start()
    let caBundle: [UInt8]? =
      plan.caFiles.isEmpty ? nil : try CABundle.load(extra: plan.caFiles, systemPath: systemCAPath, host: plan.host)
    guard let curl = cbroker_easy_init() else {
      throw .other(host: plan.host, detail: "libcurl could not start a transfer")
    }
    defer { cbroker_easy_cleanup(curl) }

    var headerList: UnsafeMutablePointer<curl_slist>?
    defer { cbroker_slist_free_all(headerList) }
    for line in plan.headerLines {
      guard let next = cbroker_slist_append(headerList, line) else {
        throw .other(host: plan.host, detail: "out of memory")
      }
      headerList = next
    }
    let errorSize = Int(CURL_ERROR_SIZE)
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: errorSize)
    defer { errorBuffer.deallocate() }
    errorBuffer.initialize(repeating: 0, count: errorSize)

    let sink = ResponseSink(limit: CurlTransport.maxBodyBytes, cancel: cancel)
    let context = Unmanaged.passUnretained(sink).toOpaque()
    let set = Setter(curl: curl, host: plan.host)

    try set(CURLOPT_URL, plan.url)
    try set(CURLOPT_PROTOCOLS_STR, "http,https")
    try set(CURLOPT_REDIR_PROTOCOLS_STR, "https")
    try set(CURLOPT_FOLLOWLOCATION, 0)
    try set(CURLOPT_NOSIGNAL, 1)
    try set(CURLOPT_SSL_VERIFYPEER, 1)
    try set(CURLOPT_SSL_VERIFYHOST, 2)
    try set(CURLOPT_CONNECTTIMEOUT, plan.connectTimeout)
    try set(CURLOPT_TIMEOUT, plan.totalTimeout)
    try set(CURLOPT_USERAGENT, plan.userAgent)
    try set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
    if plan.bypassProxy {
      try set(CURLOPT_PROXY, "")
    } else if let proxy = plan.proxy {
      try set(CURLOPT_PROXY, proxy.url)
      try set(CURLOPT_NOPROXY, proxy.noProxy)
    }
    try set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(headerList))
    try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
    if var bundle = caBundle {
      // CURL_BLOB_COPY: libcurl copies the bytes before this call returns.
      try set.check(bundle.withUnsafeMutableBytes { bytes in
        var blob = curl_blob(data: bytes.baseAddress, len: bytes.count, flags: UInt32(CURL_BLOB_COPY))
        return cbroker_easy_setopt_pointer(curl, CURLOPT_CAINFO_BLOB, &blob)
      })
    }
    switch plan.body {
    case .none: try set(CURLOPT_HTTPGET, 1)
    case .head: try set(CURLOPT_NOBODY, 1)
    case .bytes(let body):
      // A trailing NUL keeps the pointer valid for an empty body; the size excludes it.
      var copy = body + [0]
      try set(CURLOPT_POSTFIELDSIZE, body.count)
      try set.check(copy.withUnsafeMutableBytes { bytes in
        cbroker_easy_setopt_pointer(curl, CURLOPT_COPYPOSTFIELDS, bytes.baseAddress)
      })
    }
    if let method = plan.customMethod { try set(CURLOPT_CUSTOMREQUEST, method) }

    try set.check(cbroker_easy_setopt_write_function(curl, CURLOPT_WRITEFUNCTION) { data, size, count, context in
      let sink = Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue()
      let n = size * count
      return sink.appendBody(UnsafeRawBufferPointer(start: data, count: n)) ? n : 0
    })
    try set(CURLOPT_WRITEDATA, pointer: context)
    try set.check(cbroker_easy_setopt_write_function(curl, CURLOPT_HEADERFUNCTION) { data, size, count, context in
      let sink = Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue()
      let n = size * count
      sink.addHeaderLine(String(decoding: UnsafeRawBufferPointer(start: data, count: n), as: UTF8.self))
      return n
    })
    try set(CURLOPT_HEADERDATA, pointer: context)
    try set.check(cbroker_easy_setopt_xferinfo_function(curl, CURLOPT_XFERINFOFUNCTION) { context, _, _, _, _ in
      Unmanaged<ResponseSink>.fromOpaque(context!).takeUnretainedValue().cancel.isSet ? 1 : 0
    })
    try set(CURLOPT_XFERINFODATA, pointer: context)
    try set(CURLOPT_NOPROGRESS, 0)

    let code = withExtendedLifetime(sink) { cbroker_easy_perform(curl) }
    guard code == CURLE_OK else {
      throw CurlFailure.error(
        for: code, host: plan.host, url: RequestPlan.redacted(plan.url),
        message: String(cString: errorBuffer), sink: sink)
    }
    var status = 0
    try set.check(cbroker_easy_getinfo_long(curl, CURLINFO_RESPONSE_CODE, &status))
    return HTTPResponse(status: status, headers: sink.headers, body: sink.body)
  }
}

/// `curl_easy_setopt` through the shims, turning a refused option into an `HTTPError`.
private struct Setter {
  let curl: UnsafeMutableRawPointer
  let host: String

  func callAsFunction(_ option: CURLoption, _ value: Int) throws(HTTPError) {
    try check(cbroker_easy_setopt_long(curl, option, value))
  }
  func callAsFunction(_ option: CURLoption, _ value: String) throws(HTTPError) {
    try check(cbroker_easy_setopt_string(curl, option, value))  // libcurl copies strings
  }
  func callAsFunction(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) throws(HTTPError) {
    try check(cbroker_easy_setopt_pointer(curl, option, pointer))
  }
  func check(_ code: CURLcode) throws(HTTPError) {
    guard code == CURLE_OK else {
      throw .other(
        host: host,
        detail: "libcurl refused a setting (\(CurlFailure.text(of: code))); install libcurl 7.85 or later")
    }
  }
}
