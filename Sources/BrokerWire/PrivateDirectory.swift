import BrokerBasics
import Glibc

/// The one check of a directory that holds the user's sockets and locks (interface.md §2): the
/// runtime directory (`$XDG_RUNTIME_DIR/tokenbroker` or `/tmp/tokenbroker-$UID`), created 0700
/// and never chmod-ed afterwards, and the directory of an explicit `TOKENBROKER_AGENT_SOCKET`.
public enum PrivateDirectory {
  /// Why a directory cannot be used.
  public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
    /// `mkdir` failed (errno).
    case cannotCreate(Int32)
    /// `lstat` failed (errno).
    case cannotInspect(Int32)
    /// Not a directory (a symbolic link is not followed).
    case notADirectory
    /// Owned by another uid.
    case owner(UInt32)
    /// Permission bits (0o777 part) that let others in.
    case mode(UInt32)

    /// `not a directory`, `owned by uid N`, `mode 750 lets others in`, or strerror's text.
    public var description: String {
      switch self {
      case .cannotCreate(let code), .cannotInspect(let code): return Errno(code).description
      case .notADirectory: return "not a directory"
      case .owner(let uid): return "owned by uid \(uid)"
      case .mode(let mode): return "mode \(String(mode, radix: 8)) lets others in"
      }
    }

    /// True when the directory exists but is unsafe (not a failed system call).
    public var isUnsafe: Bool {
      switch self {
      case .cannotCreate, .cannotInspect: return false
      case .notADirectory, .owner, .mode: return true
      }
    }
  }

  /// Creates `path` with mode 0700 when `create` (an existing one is kept as it is), then checks
  /// it: a directory, not a symbolic link, owned by `uid`, with no group or other permission at
  /// all (`exclusive`) or at least not writable by group or others.
  /// - Returns: nil when it is safe to use.
  public static func check(_ path: String, create: Bool, exclusive: Bool, uid: UInt32 = getuid()) -> Problem? {
    if create, mkdir(path, 0o700) != 0, errno != EEXIST { return .cannotCreate(errno) }
    var st = stat()
    guard lstat(path, &st) == 0 else { return .cannotInspect(errno) }
    let mode = st.st_mode & 0o777
    if (st.st_mode & S_IFMT) != S_IFDIR { return .notADirectory }
    if st.st_uid != uid { return .owner(st.st_uid) }
    if mode & (exclusive ? 0o077 : 0o022) != 0 { return .mode(mode) }
    return nil
  }
}
