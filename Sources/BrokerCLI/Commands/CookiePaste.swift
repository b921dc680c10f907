import BrokerCore
import BrokerSystem
import Glibc

/// `login` of a SharePoint `imported-cookies` account on a terminal (interface.md §3): opens
/// `SITE/_layouts/15/Authenticate.aspx?Source=/` in the browser, then asks for the `FedAuth` and
/// `rtFa` values the user copies from the browser's developer tools, read with echo off.
enum CookiePaste {
  /// - Returns: a `Cookie:` line for `TokenService.importCookies`.
  /// - Throws: `UsageError` when a value is empty or holds a character a cookie value cannot.
  static func ask(account: AccountConfig, open: Bool, runtime: Runtime) async throws -> String {
    let context = runtime.context
    let url = (account.site ?? "") + "/_layouts/15/Authenticate.aspx?Source=/"
    if open {
      let candidates = BrowserLauncher.candidates(configured: try runtime.config().settings.browser, environment: context.environment)
      _ = try? await BrowserLauncher.open(url: url, candidates: candidates, environment: context.environment)
    }
    context.say("sign in to \(url) in a browser, then copy the values of its FedAuth and rtFa cookies (developer tools, Storage)")
    let fedAuth = try await value("FedAuth", context: context)
    let rtFa = try await value("rtFa", context: context)
    return "Cookie: FedAuth=\(fedAuth); rtFa=\(rtFa)"
  }

  private static func value(_ name: String, context: ProcessContext) async throws -> String {
    let bytes = try await SecretLine.read(fd: 0) {
      context.writeError("tokenbroker: paste the \(name) value (not shown) and press Enter: ")
    }
    let line = String(decoding: bytes ?? [], as: UTF8.self).trimmingSpaces()
    context.writeError("\n")
    let ok = !line.isEmpty && line.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != ";" && $0 != "," }
    guard ok else {
      throw UsageError("the \(name) value is empty or holds spaces or separators; copy the cookie's value only", usage: Help.usage("login"))
    }
    return line
  }
}
