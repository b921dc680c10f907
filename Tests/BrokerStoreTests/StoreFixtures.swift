import BrokerCore
import BrokerTestSupport
import Foundation
import Synchronization
import Testing

@testable import BrokerStore

/// True when the Secret Service suite must run (`TOKENBROKER_KEYRING_TESTS=1`, inside the
/// dbus-run-session recipe of keyring-notes.md). It then fails, not skips, without a keyring.
let keyringTestsEnabled = ProcessInfo.processInfo.environment["TOKENBROKER_KEYRING_TESTS"] == "1"

/// A store under test, with what the behaviour suite needs beyond the protocol.
enum StoreUnderTest: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case memory, file, encrypted, libsecret

  /// The stores the behaviour suite runs on in this process.
  static var enabled: [StoreUnderTest] { keyringTestsEnabled ? allCases : [.memory, .file, .encrypted] }

  var testDescription: String { rawValue }

  func make() -> any SecretStore {
    switch self {
    case .memory: return InMemorySecretStore()
    case .file: return FileStore(path: TempDir().path + "/data/tokenbroker/tokens.json", warn: { _ in })
    case .encrypted:
      let key = testKey()
      return EncryptedFileStore(path: TempDir().path + "/data/tokenbroker/tokens.enc", key: { key })
    case .libsecret: return LibsecretStore()
    }
  }

  /// How many stored items match `key` (the Secret Service can hold duplicates; the others cannot).
  static func count(_ store: any SecretStore, _ key: ItemKey) async throws -> Int {
    if let store = store as? LibsecretStore { return try await store.itemCount(key) }
    return try await store.load(key) == nil ? 0 : 1
  }
}

/// Limits that keep unit tests fast (the store's own default is 2 passes over 64 MiB).
let testParameters = KDFParameters.fresh(opsLimit: 1, memLimit: 8 << 20)

/// A key derived from `passphrase` with `parameters`.
func testKey(_ passphrase: String = "correct horse", parameters: KDFParameters = testParameters) -> StoreKey {
  var bytes = Array(passphrase.utf8)
  // The limits are valid and tiny: derivation cannot fail here.
  return try! Sodium.deriveKey(passphrase: &bytes, parameters: parameters)
}

/// A fresh account name, so tests sharing one keyring never see each other's items.
func uniqueAccount(_ prefix: String = "t") -> String {
  "\(prefix)-\(UInt64.random(in: 0..<UInt64.max))"
}

/// A new directory under /tmp (left for the OS to clean: tests run in throwaway environments).
struct TempDir {
  let path: String
  init() {
    var template = Array("/tmp/tb-store-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { $0.baseAddress.flatMap { mkdtemp($0) } }
    path = made.map { String(cString: $0) } ?? "/tmp/tb-store-fallback-\(UInt32.random(in: 0..<UInt32.max))"
  }

  func write(_ name: String, _ text: String, mode: mode_t = 0o600) throws -> String {
    let file = path + "/" + name
    try text.write(toFile: file, atomically: false, encoding: .utf8)
    chmod(file, mode)
    return file
  }
}

/// The permission bits of `path` (follows symbolic links), or nil.
func mode(of path: String) -> mode_t? {
  var st = stat()
  return stat(path, &st) == 0 ? st.st_mode & 0o7777 : nil
}

/// Collects warning lines from a store's `warn` closure.
final class WarningLog: Sendable {
  private let storage = Mutex<[String]>([])
  var lines: [String] { storage.withLock { $0 } }
  func append(_ line: String) { storage.withLock { $0.append(line) } }
}
