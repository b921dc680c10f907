import BrokerCore
import Glibc
import Testing

@Suite struct ModelTests {
  @Test func scopeSetIsSortedAndUnique() {
    let s = ScopeSet(parsing: "b  a\tb c")
    #expect(s.items == ["a", "b", "c"])
    #expect(s.canonical == "a b c")
    #expect(ScopeSet(["c", "a", "b"]) == s)
  }

  @Test func secretNeverPrints() {
    let s = Secret("SENTINEL-AT")
    #expect("\(s)" == "<redacted>")
    #expect(!String(reflecting: s).contains("SENTINEL"))
    var dumped = ""
    dump(s, to: &dumped)
    #expect(!dumped.contains("SENTINEL"))
    let key = ItemKey.accessToken("work", ScopeSet(["x"]))
    #expect(!"\(AccessTokenRecord(accessToken: s, expiresOn: 1, scopes: []))".contains("SENTINEL"))
    #expect(key.attributes.map(\.0) == ["application", "account", "kind", "scopes"])
  }

  @Test func itemKeysAndLabels() {
    #expect(ItemKey.refreshToken("work").attributes.map(\.1) == ["tokenbroker", "work", "refresh-token"])
    #expect(ItemKey.refreshToken("work").label(provider: "azure") == "tokenbroker: work (azure) refresh-token")
    #expect(ItemKey(account: "w", kind: .refreshToken, scopes: "x").scopes == nil)
  }

  @Test func recordsRoundTrip() throws {
    let r = RefreshTokenRecord(refreshToken: Secret("RT\"é😀"), identity: "u@x", tenant: "t", objectID: "o", obtainedAt: 1_700_000_000)
    #expect(try RefreshTokenRecord.decode(r.encoded(), item: "i") == r)
    #expect(r.encoded().revealed.contains("\"v\":1"))
    let a = AccessTokenRecord(accessToken: Secret("AT"), expiresOn: 5, scopes: ["a", "b"])
    #expect(try AccessTokenRecord.decode(a.encoded(), item: "i") == a)
    #expect(throws: StoreError.corrupt(item: "i")) { try RefreshTokenRecord.decode(Secret("not json"), item: "i") }
    #expect(throws: StoreError.corrupt(item: "i")) { try AccessTokenRecord.decode(Secret("{\"v\":2,\"access_token\":\"x\",\"expires_on\":1,\"scopes\":[]}"), item: "i") }
  }

  @Test func endpointURLs() {
    #expect(EndpointURL("https://login.example.com:8443/x?y")?.port == 8443)
    #expect(EndpointURL("http://[::1]:80/")?.isLoopback == true)
    #expect(EndpointURL("http://127.9.9.9/")?.isLoopback == true)
    #expect(EndpointURL("http://127.0.0.1.evil.com/")?.isLoopback == false)
    #expect(EndpointURL("http://localhost.evil.com/")?.isLoopback == false)
    #expect(EndpointURL("ftp://x") == nil)
    #expect(EndpointURL("https://user@host/") == nil)
    #expect(EndpointURL("https://") == nil)
    #expect(EndpointURL("https://h:0/") == nil)
  }

  @Test func pathsFollowXDGAndOverrides() {
    let p = BrokerPaths(environment: ["HOME": "/h", "XDG_RUNTIME_DIR": "/run/user/7"], uid: 7)
    #expect(p.configFiles == ["/etc/tokenbroker/config", "/h/.config/tokenbroker/config"])
    #expect(p.agentSocket == "/run/user/7/tokenbroker/agent.sock")
    #expect(p.tokenFile == "/h/.local/share/tokenbroker/tokens.json")
    let q = BrokerPaths(environment: ["HOME": "/h", "TOKENBROKER_CONFIG": "/c"], uid: 7, configOverride: nil)
    #expect(q.configFiles == ["/c"] && q.configIsExplicit)
    #expect(q.runtimeDirectory == "/tmp/tokenbroker-7" && q.runtimeDirectoryIsFallback)
    let r = BrokerPaths(environment: ["HOME": "/h", "TOKENBROKER_CONFIG": "/c"], uid: 7, configOverride: "/d")
    #expect(r.configFiles == ["/d"])
  }

  /// Y16: the full program's files follow the agent's rule for the runtime directory.
  @Test func Y16_pathsTakeTheUsersPrivateRunUserDirectoryWithoutXDGRuntimeDir() {
    let root = "/tmp/tb-paths-run-user-\(getpid())"
    mkdir(root, 0o755)
    mkdir(root + "/\(getuid())", 0o700)
    defer {
      rmdir(root + "/\(getuid())")
      rmdir(root)
    }
    let p = BrokerPaths(environment: ["HOME": "/h"], uid: getuid(), userRuntimeRoot: root)
    #expect(p.runtimeDirectory == root + "/\(getuid())/tokenbroker" && !p.runtimeDirectoryIsFallback)
    #expect(p.agentSocket == root + "/\(getuid())/tokenbroker/agent.sock")
  }

  @Test func formEncoding() {
    #expect(FormEncoding.encode([("scope", "a b/c"), ("x", "é&=")]) == "scope=a+b%2Fc&x=%C3%A9%26%3D")
  }
}

@Suite struct FormDecodingTests {
  @Test func decodesPlusPercentAndKeepsStrayPercent() {
    #expect(FormEncoding.decode("a+b%2Fc%C3%A9") == "a b/cé")
    #expect(FormEncoding.decode("100%") == "100%")
    #expect(FormEncoding.decode("%zz") == "%zz")
    #expect(FormEncoding.decode(Substring(FormEncoding.escape("x y&=é/%"))) == "x y&=é/%")
  }

  @Test func parametersKeepEveryValueInOrder() {
    #expect(FormEncoding.parameters("a=1&b=x+y&&a=%32&c&d=") == ["a": ["1", "2"], "b": ["x y"], "c": [""], "d": [""]])
    #expect(FormEncoding.parameters("") == [:])
  }
}

@Suite struct SecretMatchTests {
  @Test func matchesOnlyTheWholeValue() {
    #expect(Secret("abc").matches("abc"))
    #expect(!Secret("abc").matches("abd"))
    #expect(!Secret("abc").matches("abcd"))
    #expect(!Secret("abc").matches("ab"))
    #expect(!Secret("abc").matches(""))
    #expect(Secret("").matches(""))
  }
}

@Suite struct HTTPRedactionTests {
  @Test func requestsAndHeadersNeverPrintTheirSecrets() {
    let r = HTTPRequest.form(url: "https://login.example/t/token?x=SENTINEL-Q", fields: [("refresh_token", "SENTINEL-RT")])
    var withHeader = r
    withHeader.headers.append(HTTPHeader("Authorization", "Bearer SENTINEL-AT"))
    var dumped = ""
    dump(withHeader, to: &dumped)
    for text in ["\(withHeader)", String(reflecting: withHeader), dumped, "\(withHeader.headers)"] {
      #expect(!text.contains("SENTINEL"), "\(text)")
    }
    #expect("\(r)" == "POST https://login.example/t/token")
  }
}

@Suite("StoreError messages")
struct StoreErrorMessageTests {
  /// Where no Secret Service runs, the message names the way on for headless machines.
  @Test func unreachableSecretServiceNamesTheEncryptedFileStore() {
    for error in [StoreError.unavailable(detail: "no session bus"), .noCollection] {
      #expect(error.description.contains("store = encrypted-file"))
      #expect(error.description.contains("tokenbroker unlock"))
    }
  }

  /// A keyring that is there and answers is never sent to a restart or to another keyring.
  @Test func keyringStatesNameTheirCauseAndFix() {
    let unanswered = StoreError.unlockUnanswered(seconds: 60).description
    #expect(unanswered.contains("unlock dialog was not answered within 60 s"))
    #expect(!unanswered.contains("restart"))
    #expect(StoreError.itemsWithheld.description.contains("Confirm when passwords are retrieved by clients"))
    #expect(!StoreError.itemsWithheld.description.contains("locked"))
    let refused = StoreError.sessionRefused(detail: "maybe libqca-ossl is missing").description
    #expect(refused.contains("libqca-qt5-2-plugins") && !refused.contains("gnome-keyring"))
  }

  @Test func encryptedStoreMessagesNameTheFileAndTheWayOn() {
    #expect(StoreError.encryptedLocked(path: "/d/tokens.enc").description.contains("run 'tokenbroker unlock'"))
    #expect(StoreError.wrongPassphrase(path: "/d/tokens.enc").description.contains("/d/tokens.enc"))
    let damaged = StoreError.encryptedFileDamaged(path: "/d/tokens.enc", detail: "is truncated").description
    #expect(damaged.contains("/d/tokens.enc is truncated"))
  }
}
