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
    let fedAuth = try value("FedAuth", context: context)
    let rtFa = try value("rtFa", context: context)
    return "Cookie: FedAuth=\(fedAuth); rtFa=\(rtFa)"
  }

  private static func value(_ name: String, context: ProcessContext) throws -> String {
    let line = readLineWithoutEcho {
      context.writeError("tokenbroker: paste the \(name) value (not shown) and press Enter: ")
    }.trimmingSpaces()
    context.writeError("\n")
    let ok = !line.isEmpty && line.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F && $0 != ";" && $0 != "," }
    guard ok else {
      throw UsageError("the \(name) value is empty or holds spaces or separators; copy the cookie's value only", usage: Help.usage("login"))
    }
    return line
  }

  /// One line from standard input with the terminal's echo off (restored afterwards); `prompt`
  /// is shown once echo is off, so nothing typed ahead of it is echoed either.
  private static func readLineWithoutEcho(prompt: () -> Void) -> String {
    var saved = termios()
    let isTerminal = tcgetattr(0, &saved) == 0
    if isTerminal {
      var quiet = saved
      quiet.c_lflag &= ~tcflag_t(ECHO)
      tcsetattr(0, TCSANOW, &quiet)
    }
    defer { if isTerminal { tcsetattr(0, TCSANOW, &saved) } }
    prompt()
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while bytes.count < 16384, read(0, &byte, 1) == 1, byte != 0x0A { bytes.append(byte) }
    if bytes.last == 0x0D { bytes.removeLast() }
    return String(decoding: bytes, as: UTF8.self)
  }
}
