/// The small pages the browser shows at the end of a sign-in (no script, no external resource;
/// the listener's Content-Security-Policy forbids both).
public enum LoopbackPage {
  /// The sign-in reached tokenbroker: the terminal shows the outcome.
  public static func success(account: String) -> String {
    page(
      title: "Signed in", heading: "tokenbroker received the sign-in for \(escape(account))",
      text: "You can close this tab and return to the terminal.")
  }

  /// The provider answered with an error (`error` is a code word, `detail` optional).
  public static func failure(account: String, error: String, detail: String?) -> String {
    page(
      title: "Sign-in failed", heading: "The sign-in for \(escape(account)) did not complete",
      text: "The identity provider answered: \(escape(error))\(detail.map { " (\(escape($0)))" } ?? ""). "
        + "The terminal says what to do next.")
  }

  /// A request that does not belong to the sign-in in progress (wrong or missing `state`).
  public static let foreign = page(
    title: "Not this sign-in",
    heading: "This response does not belong to the sign-in in progress",
    text: "tokenbroker ignored it and is still waiting. Finish the sign-in in the tab that tokenbroker opened.")

  /// A request for the redirect path without a code or an error.
  public static let incomplete = page(
    title: "Incomplete response", heading: "This response carries no authorization code",
    text: "tokenbroker is still waiting for the sign-in to finish.")

  /// Any other path (`/favicon.ico`) or a malformed request.
  public static let notFound = page(title: "Not found", heading: "Not found", text: "")

  /// Any method but GET and HEAD on the redirect path.
  public static let methodNotAllowed = page(title: "Not allowed", heading: "Method not allowed", text: "")

  static func page(title: String, heading: String, text: String) -> String {
    """
    <!doctype html><html lang="en"><head><meta charset="utf-8"><title>tokenbroker: \(title)</title>
    <style>body{font-family:sans-serif;max-width:40em;margin:4em auto;padding:0 1em}</style></head>
    <body><h1>\(heading)</h1><p>\(text)</p></body></html>

    """
  }

  /// `text` with `& < > " '` escaped, and control characters dropped.
  public static func escape(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&#39;"
      default: if scalar.value >= 0x20 && !(0x7F...0x9F).contains(scalar.value) { out.unicodeScalars.append(scalar) }
      }
    }
    return out
  }
}
