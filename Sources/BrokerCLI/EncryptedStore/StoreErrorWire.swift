import BrokerCore

/// A `StoreError` as the `err[]` lines of an agent reply (`StoreMessage`), and back, so a command
/// outside the agent fails with the very error the agent met (exit 5, the same message).
enum StoreErrorWire {
  static func lines(_ error: StoreError) -> [String] {
    switch error {
    case .locked: return ["locked"]
    case .unlockDismissed: return ["unlock-dismissed"]
    case .noCollection: return ["no-collection"]
    case .unavailable(let detail): return ["unavailable", detail]
    case .timedOut(let seconds): return ["timed-out", String(seconds)]
    case .readBackMismatch: return ["read-back-mismatch"]
    case .corrupt(let item): return ["corrupt", item]
    case .file(let path, let detail): return ["file", path, detail]
    case .backend(let detail): return ["backend", detail]
    case .encryptedLocked(let path): return ["encrypted-locked", path]
    case .wrongPassphrase(let path): return ["wrong-passphrase", path]
    case .encryptedFileDamaged(let path, let detail): return ["damaged", path, detail]
    case .crypto(let detail): return ["crypto", detail]
    case .agentUnreachable(let socket): return ["agent-unreachable", socket]
    }
  }

  /// The error of `lines`; anything unknown becomes `.file` naming `path` with the text.
  static func error(_ lines: [String], path: String) -> StoreError {
    func at(_ i: Int) -> String { i < lines.count ? lines[i] : "" }
    switch at(0) {
    case "locked": return .locked
    case "unlock-dismissed": return .unlockDismissed
    case "no-collection": return .noCollection
    case "unavailable": return .unavailable(detail: at(1))
    case "timed-out": return .timedOut(seconds: Int(at(1)) ?? 0)
    case "read-back-mismatch": return .readBackMismatch
    case "corrupt": return .corrupt(item: at(1))
    case "file": return .file(path: at(1), detail: at(2))
    case "backend": return .backend(detail: at(1))
    case "encrypted-locked": return .encryptedLocked(path: at(1))
    case "wrong-passphrase": return .wrongPassphrase(path: at(1))
    case "damaged": return .encryptedFileDamaged(path: at(1), detail: at(2))
    case "crypto": return .crypto(detail: at(1))
    case "agent-unreachable": return .agentUnreachable(socket: at(1))
    default: return .file(path: path, detail: "the agent answered: " + lines.joined(separator: " "))
    }
  }
}
