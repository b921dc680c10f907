import BrokerCore
import Testing

@testable import BrokerStore

@Suite("KeyFileLoader")
struct KeyFileLoaderTests {
  let dir = TempDir()

  private func value(_ raw: RawConfig, _ group: String, _ key: String) -> RawConfig.Entry? {
    raw.groups.first { $0.name == group }?.entries.first { $0.key == key }
  }

  @Test func mergesSystemAndUserFilesKeyByKey() throws {
    let system = try dir.write(
      "etc", "[broker]\nstore = file\nagent = off\n\n[account work]\nprovider = azure\nclient-id = sys\n", mode: 0o644)
    let user = try dir.write("user", "[broker]\nagent = auto\n\n[account home]\nprovider = google\n")
    let raw = try KeyFileLoader.load(paths: [system, user], explicit: false)
    #expect(raw.groups.map(\.name) == ["broker", "account work", "account home"])
    #expect(value(raw, "broker", "store") == RawConfig.Entry(key: "store", value: "file", file: system))
    #expect(value(raw, "broker", "agent") == RawConfig.Entry(key: "agent", value: "auto", file: user))
    #expect(value(raw, "account work", "client-id")?.file == system)
    #expect(value(raw, "account home", "provider")?.file == user)
  }

  @Test func missingDefaultFilesAreSkippedButAnExplicitOneIsAnError() throws {
    let user = try dir.write("user", "[broker]\nstore = file\n")
    let raw = try KeyFileLoader.load(paths: [dir.path + "/absent", user], explicit: false)
    #expect(value(raw, "broker", "store")?.value == "file")
    #expect(try KeyFileLoader.load(paths: [dir.path + "/a", dir.path + "/b"], explicit: false) == RawConfig())
    #expect(throws: ConfigError.unreadable(file: dir.path + "/absent", detail: "no such file")) {
      try KeyFileLoader.load(paths: [dir.path + "/absent"], explicit: true)
    }
  }

  @Test func gkeyfileRules() throws {
    let file = try dir.write(
      "c",
      """
      # a comment
        # an indented comment line
      [account work]
      client-id =   abc # not a comment   
      hosts=dev.azure.com   *.example.com
      login-hint = a\\sb\\tc
      padded = x\\s\t\t
      empty =

      """)
    let raw = try KeyFileLoader.load(paths: [file], explicit: true)
    #expect(value(raw, "account work", "client-id")?.value == "abc # not a comment")
    #expect(value(raw, "account work", "hosts")?.value == "dev.azure.com   *.example.com")
    #expect(value(raw, "account work", "login-hint")?.value == "a b\tc")
    #expect(value(raw, "account work", "padded")?.value == "x ")
    #expect(value(raw, "account work", "empty")?.value == "")
    #expect(raw.groups.first?.entries.map(\.key) == ["client-id", "hosts", "login-hint", "padded", "empty"])
  }

  @Test func syntaxErrorNamesTheFile() throws {
    let file = try dir.write("bad", "[broker]\nthis line has no equals sign\n")
    let error = #expect(throws: ConfigError.self) { try KeyFileLoader.load(paths: [file], explicit: false) }
    guard case .unreadable(let named, let detail) = error else { Issue.record("wrong error"); return }
    #expect(named == file)
    #expect(!detail.isEmpty)
    #expect("\(error.map { "\($0)" } ?? "")".contains(file))
    let noGroup = try dir.write("nogroup", "store = file\n")
    #expect(throws: ConfigError.self) { try KeyFileLoader.load(paths: [noGroup], explicit: false) }
  }

  @Test func badEscapeIsAnInvalidValue() throws {
    let file = try dir.write("esc", "[broker]\nbrowser = C:\\path\n")
    #expect(throws: ConfigError.self) { try KeyFileLoader.load(paths: [file], explicit: false) }
  }

  /// The sample of interface.md §2.1, through GKeyFile and ConfigParser.
  @Test func interfaceSampleParses() throws {
    let file = try dir.write("config", interfaceSample)
    let config = try ConfigParser.parse(try KeyFileLoader.load(paths: [file], explicit: true))
    #expect(config.settings.store == .secretService)
    #expect(config.settings.agent == .auto)
    #expect(config.accounts.map(\.name) == ["work", "personal", "intranet"])
    let work = try config.requireAccount("work")
    #expect(work.provider == .azure)
    #expect(work.tenant == "contoso.onmicrosoft.com")
    #expect(work.scopes == ["https://graph.microsoft.com/User.Read", "https://graph.microsoft.com/Calendars.ReadWrite"])
    let personal = try config.requireAccount("personal")
    #expect(personal.clientSecret == Secret("GOCSPX-example"))
    #expect(personal.hosts == ["europe-west1-docker.pkg.dev"])
    #expect(personal.gitUsername == "oauth2accesstoken")
    #expect(try config.requireAccount("intranet").via == "work")
    #expect(config.hosts == [HostConfig(host: "dev.azure.com", account: "work", scopes: ["499b84ac-1321-427f-aa17-267ca6975798/.default"])])
    #expect(config.warnings.isEmpty)
  }
}

let interfaceSample = """
  [broker]
  # secret-service (default) or file (plaintext, opt-in, warns on every write)
  store = secret-service
  # auto: spawn the agent on first use; off: every call works in the full program
  agent = auto

  # Microsoft Graph for scripts; git for Azure DevOps through a [host] group below
  [account work]
  provider = azure
  tenant = contoso.onmicrosoft.com
  client-id = 11111111-2222-3333-4444-555555555555
  scopes = https://graph.microsoft.com/User.Read https://graph.microsoft.com/Calendars.ReadWrite

  [host dev.azure.com]
  account = work
  scopes = 499b84ac-1321-427f-aa17-267ca6975798/.default

  [account personal]
  provider = google
  client-id = 1234-abc.apps.googleusercontent.com
  client-secret = GOCSPX-example
  scopes = openid email https://www.googleapis.com/auth/cloud-platform
  hosts = europe-west1-docker.pkg.dev
  git-username = oauth2accesstoken

  [account intranet]
  provider = sharepoint
  site = https://contoso.sharepoint.com
  via = work
  mode = bearer

  """
