// The parsers of everything tokenbroker reads from another program, as libFuzzer targets
// (README "Fuzzing"). Built only by scripts/fuzz, with `-sanitize=fuzzer`: libFuzzer supplies
// `main` and calls `LLVMFuzzerTestOneInput` with each input. One binary serves every target;
// `TOKENBROKER_FUZZ_TARGET` names the one a run exercises.
//
// A target must not crash, trap or hang on any input: it returns 0 whatever the parser decides.
// A crash found becomes a seed under Tests/Fuzz/Corpus/TARGET/ and a unit test of that parser.

@testable import BrokerCLI
@testable import BrokerCore
@testable import BrokerProviders
@testable import BrokerStore
@testable import BrokerSystem
@testable import BrokerWire
import CFuzzDriver
import Glibc

/// Each target: one input's bytes to the parser(s) it names.
let targets: [String: @Sendable ([UInt8]) -> Void] = [
  // git's credential helper request (git-credential(1)), then the target it names.
  "git-request": { bytes in
    guard let message = try? CredentialCodec.decode(bytes) else { return }
    if let target = try? GitTarget(message) {
      _ = try? target.requireSecureProtocol()
      _ = HostResolverName.stripPort(target.host)
    }
    _ = message.values("wwwauth[]").flatMap { BearerChallenge.parse($0) }
    _ = try? CredentialCodec.encode(message.fields)
  },
  // docker-credential-helpers' `get`/`erase` stdin (a server URL) and `store` document.
  "docker-request": { bytes in
    guard let text = String(validating: bytes, as: UTF8.self) else { return }
    _ = RegistryAddress.host(of: text.trimmingWhitespace())
  },
  // The agent's request and reply frames (interface.md §8 wire).
  "agent-request": { bytes in
    _ = try? AgentRequest.decode(bytes)
    _ = try? AgentReply.decode(bytes)
  },
  // `wwwauth[]` values: WWW-Authenticate challenges (RFC 9110 §11.6.1, RFC 6750 §3).
  "wwwauth": { bytes in
    _ = BearerChallenge.parse(String(decoding: bytes, as: UTF8.self))
  },
  // A token endpoint's reply body (RFC 6749 §5.1, §5.2) and any error in it, as JSON and as the
  // form-encoded body GitHub sends unless asked for JSON.
  "token-reply": { bytes in
    for body in [bytes, FormReply.json(bytes)] {
      _ = try? TokenReply.grant(from: body, requested: ScopeSet(["openid", "offline_access"]), now: 1_800_000_000, host: "login.example")
      _ = OAuthErrorReply.parse(body, status: 400, secrets: ["refresh-secret"])
      _ = OAuthErrorReply.parse(body, status: 200, secrets: [])
    }
  },
  // A device authorization reply (RFC 8628 §3.2), as JSON and form-encoded.
  "device-reply": { bytes in
    _ = try? DeviceAuthorizationReply.parse(bytes, now: 1_800_000_000, host: "login.example")
    _ = try? DeviceAuthorizationReply.parse(FormReply.json(bytes), now: 1_800_000_000, host: "github.example")
  },
  // An OpenID Connect discovery document (OpenID Connect Discovery 1.0 §4).
  "discovery": { bytes in
    _ = OIDCMetadata.parse(bytes, overrides: EndpointOverrides())
  },
  // An ID token's claims (unverified read, OpenID Connect Core §2) and a redirect's query.
  "id-token": { bytes in
    let text = String(decoding: bytes, as: UTF8.self)
    _ = IDToken.claims(of: text)
    _ = AuthorizationRedirect.check(query: text, state: "expected-state")
    _ = AuthorizationRedirect.check(pasted: text, state: "expected-state")
  },
  // The head of an HTTP request to the SDK endpoints and the loopback redirect listener.
  "http-head": { bytes in
    _ = EndpointServer.admission(bytes, headers: [], hosts: ["127.0.0.1:8080", "localhost:8080"])
  },
  // The encrypted store's header (interface.md §7.1), and an open with a fixed key.
  "encrypted-header": { bytes in
    _ = try? EncryptedFileFormat.header(of: bytes)
    if let key = fuzzKey { _ = try? EncryptedFileFormat.open(bytes, key: key) }
  },
  // Stored documents as a keyring hands them back (refresh token, access token, cookies).
  "stored-record": { bytes in
    let secret = Secret(String(decoding: bytes, as: UTF8.self))
    _ = try? RefreshTokenRecord.decode(secret, item: "fuzz")
    _ = try? AccessTokenRecord.decode(secret, item: "fuzz")
    _ = try? CookieRecord.decode(secret, item: "fuzz")
  },
  // SharePoint's Set-Cookie headers (RFC 6265 §5.2).
  "set-cookie": { bytes in
    _ = SetCookie.parse(String(decoding: bytes, as: UTF8.self), defaultDomain: "contoso.sharepoint.com", now: 1_800_000_000)
  },
  // The front's own reading of the config file (BrokerWire's key-file reader) and the full
  // program's (GKeyFile through KeyFileLoader, then ConfigParser).
  "config": { bytes in
    _ = KeyFileReader.value(group: "broker", key: "agent", in: bytes)
    if let raw = try? KeyFileLoader.load(paths: ["/fuzz/config"], contents: [bytes], errors: [0], explicit: true) {
      _ = try? ConfigParser.parse(raw)
    }
  },
]

let fuzzKey = StoreKey(hex: Array(String(repeating: "ab", count: 32).utf8),
                       parameters: KDFParameters(salt: Array(repeating: 7, count: 16), opsLimit: 2, memLimit: 64 << 20))

/// Set by `LLVMFuzzerInitialize` from `TOKENBROKER_FUZZ_TARGET`, before the first input.
nonisolated(unsafe) var selected: (@Sendable ([UInt8]) -> Void)?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
  guard let name = getenv("TOKENBROKER_FUZZ_TARGET").map({ String(cString: $0) }), let target = targets[name] else {
    let names = targets.keys.sorted().joined(separator: " ")
    let line = Array("tokenbroker-fuzz: set TOKENBROKER_FUZZ_TARGET to one of: \(names)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(64)
  }
  selected = target
  return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  let bytes = size == 0 || data == nil ? [] : Array(UnsafeBufferPointer(start: data, count: size))
  selected?(bytes)
  return 0
}
