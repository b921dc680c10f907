import BrokerCore
import BrokerTestSupport
import FoundationEssentials
import Synchronization

@testable import BrokerProviders

/// Shared test data: an Azure account, token replies in the shape Entra ID sends them
/// (protocols.md §2.3–2.7), and sentinel secrets.
enum Fixtures {
  static let start: Int64 = 1_700_000_000
  static let tokenURL = "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token"
  static let deviceURL = "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/devicecode"
  static let graph = "https://graph.microsoft.com/.default"

  static func account(_ name: String = "work") -> AccountConfig {
    var a = AccountConfig(name: name, provider: .azure)
    a.clientID = "11111111-2222-3333-4444-555555555555"
    a.tenant = "contoso.onmicrosoft.com"
    return a
  }

  static func config(_ accounts: [AccountConfig] = [account()]) -> BrokerConfig {
    var c = BrokerConfig()
    c.accounts = accounts
    return c
  }

  /// A JWS whose payload is `claims` (JSON text); header and signature are dummies.
  static func jwt(_ claims: String) -> String {
    func b64url(_ s: String) -> String {
      Data(s.utf8).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }
    return b64url(#"{"alg":"RS256","typ":"JWT"}"#) + "." + b64url(claims) + ".c2lnbmF0dXJl"
  }

  static let idToken = jwt(
    #"{"preferred_username":"user1@example.test","oid":"oid-1","tid":"tid-1","sub":"sub-1","name":"User One"}"#)

  /// A token reply; `rt: nil` leaves `refresh_token` out.
  static func tokenReply(at: String = "AT2", rt: String? = "RT2", expiresIn: String = "3599", idToken: String? = nil)
    -> FakeTransport.Reply
  {
    var fields = [#""token_type":"Bearer""#, #""access_token":"\#(at)""#, #""expires_in":\#(expiresIn)"#, #""scope":"https://graph.microsoft.com/.default""#]
    if let rt { fields.append(#""refresh_token":"\#(rt)""#) }
    if let idToken { fields.append(#""id_token":"\#(idToken)""#) }
    return .json("{" + fields.joined(separator: ",") + "}")
  }

  static func oauthError(
    _ error: String, description: String = "", codes: [Int] = [], suberror: String? = nil, status: Int = 400,
    extra: String = ""
  ) -> FakeTransport.Reply {
    var body = #"{"error":"\#(error)","error_description":"\#(description)","error_codes":\#(codes)"#
    if let suberror { body += #","suberror":"\#(suberror)""# }
    body += extra + "}"
    return .json(body, status: status)
  }

  static func deviceReply(interval: String? = "5", expiresIn: String? = "900", deviceCode: String = "DC-SENTINEL-1")
    -> FakeTransport.Reply
  {
    var fields = [
      #""device_code":"\#(deviceCode)""#, #""user_code":"ABCD-EFGH""#,
      #""verification_uri":"https://microsoft.com/devicelogin""#,
      #""message":"To sign in, use a web browser to open the page https://microsoft.com/devicelogin and enter the code ABCD-EFGH to authenticate.""#,
    ]
    if let interval { fields.append(#""interval":\#(interval)"#) }
    if let expiresIn { fields.append(#""expires_in":\#(expiresIn)"#) }
    return .json("{" + fields.joined(separator: ",") + "}")
  }

  static func provider(_ transport: FakeTransport, _ time: FakeTime, account: AccountConfig = account()) throws
    -> AzureProvider
  {
    try AzureProvider(account: account, settings: BrokerSettings(), transport: transport, time: time)
  }
}

/// Collects warnings from `TokenService`.
final class Warnings: Sendable {
  private let lines = Mutex<[String]>([])
  var all: [String] { lines.withLock { $0 } }
  func add(_ line: String) { lines.withLock { $0.append(line) } }
}
