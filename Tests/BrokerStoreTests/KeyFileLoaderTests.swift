import BrokerCore
import Foundation
import Synchronization
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
  /// A config file is opened once, without blocking, and checked and read through that
  /// descriptor. It was checked by path (stat) and then opened by path: a FIFO renamed into its
  /// place between the two (here a thread swaps a regular file and a FIFO in, as fast as it can)
  /// was opened for reading, which waits for a writer. A load that takes more than 2 s is such a
  /// wait: it is ended by opening the FIFO for writing, and counted.
  @Test func aFileSwappedForAFIFOUnderTheLoadNeverBlocksIt() throws {
    let path = try dir.write("config", "[broker]\nstore = file\n")
    let regular = dir.path + "/regular"
    let fifo = dir.path + "/fifo"
    #expect(link(path, regular) == 0)
    #expect(mkfifo(fifo, 0o600) == 0)
    let staged = dir.path + "/staged"
    let race = SwapRace()
    Thread.detachNewThread {
      var n = 0
      while !race.stop.load(ordering: .relaxed) {
        n += 1
        _ = link(n % 2 == 0 ? fifo : regular, staged)
        _ = rename(staged, path)
        _ = unlink(staged)  // left when both named one file already (rename then does nothing)
      }
      race.swapperDone.store(true, ordering: .relaxed)
    }
    Thread.detachNewThread {
      while !race.loaderDone.load(ordering: .relaxed) {
        usleep(50_000)
        let since = race.loadStarted.load(ordering: .relaxed)
        guard since != 0, SwapRace.now - since > 2_000_000_000 else { continue }
        race.blocked.add(1, ordering: .relaxed)
        let fd = open(fifo, O_WRONLY | O_NONBLOCK)
        if fd >= 0 { close(fd) }
      }
    }
    var outcomes = (loaded: 0, refused: 0)
    let until = SwapRace.now + 2_000_000_000
    while SwapRace.now < until && race.blocked.load(ordering: .relaxed) == 0 {
      race.loadStarted.store(SwapRace.now, ordering: .relaxed)
      do {
        if try KeyFileLoader.load(file: path, required: false) != nil { outcomes.loaded += 1 }
      } catch ConfigError.unreadable(_, let detail) where detail == "Not a regular file" {
        outcomes.refused += 1
      }
      race.loadStarted.store(0, ordering: .relaxed)
    }
    race.loaderDone.store(true, ordering: .relaxed)
    race.stop.store(true, ordering: .relaxed)
    while !race.swapperDone.load(ordering: .relaxed) { usleep(1000) }
    #expect(race.blocked.load(ordering: .relaxed) == 0)
    #expect(outcomes.loaded > 0)
    #expect(outcomes.refused > 0)
  }

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

/// The state shared by `aFileSwappedForAFIFOUnderTheLoadNeverBlocksIt`'s threads.
final class SwapRace: Sendable {
  let stop = Atomic<Bool>(false)
  let swapperDone = Atomic<Bool>(false)
  let loaderDone = Atomic<Bool>(false)
  /// When the load under way started (`now`), 0 between loads.
  let loadStarted = Atomic<UInt64>(0)
  /// How many loads waited more than 2 s.
  let blocked = Atomic<Int>(0)
  /// Monotonic nanoseconds.
  static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }
}
