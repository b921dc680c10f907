import BrokerCore
import BrokerProviders
import Glibc

/// `login ACCOUNT --cookies-from FILE` for SharePoint `imported-cookies` accounts (interface.md
/// §3), and the pointer to the `via` account for the other SharePoint modes.
enum CookieLogin {
  /// Largest cookie file read (bytes).
  static let fileLimit = 1 << 20

  /// Handles `login` of a SharePoint account; nil for other providers (the OAuth flows run).
  /// - Throws: `UsageError` (imported-cookies without `--cookies-from`, unreadable file),
  ///   `ProviderError.unsupported` (bearer/cookie accounts sign in through `via`), what
  ///   `TokenService.importCookies` throws.
  static func run(_ a: Arguments, account: AccountConfig, runtime: Runtime, usage: String) async throws -> ExitStatus? {
    guard account.provider == .sharepoint else {
      if a.value("cookies-from") != nil {
        throw UsageError("--cookies-from is only for sharepoint accounts with mode = imported-cookies", usage: usage)
      }
      return nil
    }
    guard account.mode == .importedCookies else {
      let via = account.via ?? "VIA"
      throw ProviderError.unsupported(
        "'\(account.name)' signs in through the azure account '\(via)'; run 'tokenbroker login \(via)'")
    }
    let text: String
    if let path = a.value("cookies-from") {
      guard let file = readFile(path) else {
        throw UsageError("cannot read the cookie file '\(path)' (missing, unreadable or over 1 MiB); check the path", usage: usage)
      }
      text = file
    } else if runtime.context.isInteractive {
      text = try await CookiePaste.ask(account: account, open: !a.flag("no-open"), runtime: runtime)
    } else {
      throw UsageError(
        "not on a terminal: export the site's cookies and pass --cookies-from FILE (a Netscape cookie file or a 'Cookie:' line)",
        usage: usage)
    }
    let cookies = try await runtime.tokenService().importCookies(account: account.name, text: text)
    let names = cookies.cookies.map(\.name).joined(separator: ", ")
    runtime.context.writeOutput(
      "stored \(names) for \(account.name) (valid until \(RFC3339.utc(cookies.expiresOn)))\n")
    return .success
  }

  /// The file's text, or nil. - Note: a short blocking read of a small local file.
  static func readFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    return readAll(fd: fd, limit: fileLimit).map { String(decoding: $0, as: UTF8.self) }
  }
}
