import BrokerCore
import BrokerTestSupport

@testable import BrokerProviders

/// A Google account and replies in the shapes Google sends them (protocols.md §3).
enum GoogleFixtures {
  static let clientID = "1234-abc.apps.googleusercontent.com"
  static let secret = "GOCSPX-SENTINEL-desktop"
  static let deviceClientID = "5678-tv.apps.googleusercontent.com"
  static let deviceSecret = "GOCSPX-SENTINEL-device"
  static let tokenURL = "https://oauth2.googleapis.com/token"
  static let cloud = "https://www.googleapis.com/auth/cloud-platform"
  static let idToken = Fixtures.jwt(#"{"iss":"https://accounts.google.com","sub":"110248495921238986420","email":"user1@example.test","email_verified":true}"#)

  static func account(device: Bool = true) -> AccountConfig {
    var a = AccountConfig(name: "g", provider: .google)
    a.clientID = clientID
    a.clientSecret = Secret(secret)
    if device {
      a.deviceClientID = deviceClientID
      a.deviceClientSecret = Secret(deviceSecret)
    }
    a.scopes = ["openid", "email", cloud]
    return a
  }

  static func provider(_ transport: FakeTransport, _ time: FakeTime = FakeTime(now: Fixtures.start), device: Bool = true)
    throws -> GoogleProvider
  {
    try GoogleProvider(account: account(device: device), settings: BrokerSettings(), transport: transport, time: time)
  }

  /// Google's token reply: no `ext_expires_in`, `refresh_token` only when given.
  static func tokenReply(at: String = "ya29.AT", rt: String? = nil, idToken: String? = GoogleFixtures.idToken)
    -> FakeTransport.Reply
  {
    var fields = [#""access_token":"\#(at)""#, #""expires_in":3599"#, #""token_type":"Bearer""#, #""scope":"openid email""#]
    if let rt { fields.append(#""refresh_token":"\#(rt)""#) }
    if let idToken { fields.append(#""id_token":"\#(idToken)""#) }
    return .json("{" + fields.joined(separator: ",") + "}")
  }

  static func error(_ error: String, _ description: String, status: Int = 400, subtype: String? = nil) -> FakeTransport.Reply {
    var body = #"{"error":"\#(error)","error_description":"\#(description)""#
    if let subtype { body += #","error_subtype":"\#(subtype)""# }
    return .json(body + "}", status: status)
  }

  static let deviceReply = FakeTransport.Reply.json(
    #"{"device_code":"DC-SENTINEL-G","user_code":"ABCD-EFGH","expires_in":1800,"interval":5,"verification_url":"https://www.google.com/device"}"#)

  static func config() -> BrokerConfig { Fixtures.config([account()]) }
}
