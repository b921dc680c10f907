import BrokerCore

/// A `StoreError` as the `err[]` lines of an agent reply (`StoreMessage`), and back, so a command
/// outside the agent fails with the very error the agent met (exit 5, the same message).
public enum StoreErrorWire {
  public static func lines(_ error: StoreError) -> [String] {
    switch error {
    case .locked: return ["locked"]
    case .unlockDismissed: return ["unlock-dismissed"]
    case .unlockUnanswered(let seconds): return ["unlock-unanswered", String(seconds)]
    case .itemsWithheld: return ["items-withheld"]
    case .sessionRefused(let detail): return ["session-refused", detail]
    case .noCollection: return ["no-collection"]
    case .unavailable(let detail): return ["unavailable", detail]
    case .timedOut(let seconds): return ["timed-out", String(seconds)]
    case .readBackMismatch: return ["read-back-mismatch"]
    case .corrupt(let item): return ["corrupt", item]
    case .file(let path, let detail): return ["file", path, detail]
    case .backend(let detail): return ["backend", detail]
    case .encryptedLocked(let path): return ["encrypted-locked", path]
    case .encryptedMissing(let path): return ["encrypted-missing", path]
    case .agentServesAnotherStore(let path, let served, let socket): return ["other-store", path, served, socket]
    case .createdMeanwhile(let path): return ["created-meanwhile", path]
    case .wrongPassphrase(let path): return ["wrong-passphrase", path]
    case .outOfMemory(let path, let needed, let room, let newStore):
      return ["out-of-memory", path, String(needed), room, newStore ? "new" : "existing"]
    case .encryptedFileDamaged(let path, let detail): return ["damaged", path, detail]
    case .crypto(let detail): return ["crypto", detail]
    case .agentUnreachable(let socket): return ["agent-unreachable", socket]
    case .rotatedNotStored(let account, let cause): return ["rotated-not-stored", account, cause]
    }
  }

  /// The error of `lines`; anything unknown becomes `.file` naming `path` with the text.
  public static func error(_ lines: [String], path: String) -> StoreError {
    func at(_ i: Int) -> String { i < lines.count ? lines[i] : "" }
    switch at(0) {
    case "locked": return .locked
    case "unlock-dismissed": return .unlockDismissed
    case "unlock-unanswered": return .unlockUnanswered(seconds: Int(at(1)) ?? 0)
    case "items-withheld": return .itemsWithheld
    case "session-refused": return .sessionRefused(detail: at(1))
    case "no-collection": return .noCollection
    case "unavailable": return .unavailable(detail: at(1))
    case "timed-out": return .timedOut(seconds: Int(at(1)) ?? 0)
    case "read-back-mismatch": return .readBackMismatch
    case "corrupt": return .corrupt(item: at(1))
    case "file": return .file(path: at(1), detail: at(2))
    case "backend": return .backend(detail: at(1))
    case "encrypted-locked": return .encryptedLocked(path: at(1))
    case "encrypted-missing": return .encryptedMissing(path: at(1))
    case "other-store": return .agentServesAnotherStore(path: at(1), served: at(2), socket: at(3))
    case "created-meanwhile": return .createdMeanwhile(path: at(1))
    case "wrong-passphrase": return .wrongPassphrase(path: at(1))
    case "out-of-memory":
      return .outOfMemory(path: at(1), neededMiB: UInt64(at(2)) ?? 0, room: at(3), newStore: at(4) == "new")
    case "damaged": return .encryptedFileDamaged(path: at(1), detail: at(2))
    case "crypto": return .crypto(detail: at(1))
    case "agent-unreachable": return .agentUnreachable(socket: at(1))
    case "rotated-not-stored": return .rotatedNotStored(account: at(1), cause: at(2))
    default: return .file(path: path, detail: "the agent answered: " + lines.joined(separator: " "))
    }
  }
}
