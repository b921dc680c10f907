import BrokerCore
import Glibc
import Testing

@testable import BrokerSystem

/// `account-ACCOUNT.state` in the runtime directory (interface.md §8.1): every state reads back as
/// written, by any instance (another process); a file that is not one reads as none.
@Suite struct AccountStateFileTests {
  func directory() -> String { String(cString: mkdtemp(strdup("/tmp/tb-account-state-XXXXXX"))) }

  static let need = SignInNeed(
    since: 1_700_000_000, reason: .rejected, detail: "the refresh token was rejected (invalid_grant)", identity: "user1@example.test")
  static let states: [AccountState] = [
    .signedIn, .signedOut(since: 1_700_000_001), .signedOut(since: nil), .signInNeeded(need),
    .signInNeeded(SignInNeed(since: nil, reason: .neverSignedIn)), .signInPending(SignInNeed(since: 5, reason: .expired)),
    .cooldown(SignInNeed(since: 5, reason: .revoked, detail: "a\nb"), until: 1_700_000_900),
  ]

  @Test(arguments: states) func aStateReadsBackAsWritten(state: AccountState) throws {
    let dir = directory()
    AccountStateFile(runtimeDirectory: dir).record(state, account: "work")
    let read = AccountStateFile(runtimeDirectory: dir).recorded(account: "work")
    if case .cooldown(let need, let until) = state {
      // A line end in what the provider said becomes a space: one pair a line.
      var flat = need
      flat.detail = "a b"
      #expect(read == .cooldown(flat, until: until))
    } else {
      #expect(read == state)
    }
    var st = stat()
    #expect(lstat(dir + "/account-work.state", &st) == 0 && st.st_mode & 0o777 == 0o600)
  }

  @Test func accountsAreKeptApartAndReplacedWhole() throws {
    let dir = directory()
    let file = AccountStateFile(runtimeDirectory: dir)
    file.record(.signInNeeded(Self.need), account: "work")
    file.record(.signedOut(since: 3), account: "home")
    file.record(.signedIn, account: "work")
    #expect(file.recorded(account: "work") == .signedIn)
    #expect(file.recorded(account: "home") == .signedOut(since: 3))
    #expect(file.recorded(account: "other") == nil)
    // No temporary file is left behind.
    #expect(try Self.names(dir).sorted() == ["account-home.state", "account-work.state"])
  }

  @Test(arguments: [
    "", "state=asleep\n", "state=sign-in-needed\n", "state=sign-in-needed\nreason=bored\n",
    "state=cooldown\nreason=rejected\n", String(repeating: "x", count: 5000),
  ])
  func aFileThatIsNotAStateIsNone(text: String) throws {
    let dir = directory()
    let fd = open(dir + "/account-work.state", O_WRONLY | O_CREAT, 0o600)
    _ = text.withCString { write(fd, $0, strlen($0)) }
    close(fd)
    #expect(AccountStateFile(runtimeDirectory: dir).recorded(account: "work") == nil)
  }

  @Test func aSymbolicLinkIsNotFollowed() throws {
    let dir = directory()
    let target = dir + "/elsewhere"
    AccountStateFile(runtimeDirectory: dir).record(.signedIn, account: "x")
    rename(dir + "/account-x.state", target)
    symlink(target, dir + "/account-work.state")
    #expect(AccountStateFile(runtimeDirectory: dir).recorded(account: "work") == nil)
  }

  static func names(_ dir: String) throws -> [String] {
    guard let d = opendir(dir) else { return [] }
    defer { closedir(d) }
    var names: [String] = []
    while let entry = readdir(d) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
      if name != "." && name != ".." { names.append(name) }
    }
    return names
  }
}
