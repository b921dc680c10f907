import BrokerCore
import Glibc

/// A `RefreshHold` as a small file in the runtime directory (`KeyValueFile`): three lines,
/// `until=` (Unix seconds), `host=` and `reason=`.
enum RefreshHoldFile {
  /// The hold at `path` if it is still in force at `now`; nil when there is none, it has ended, or
  /// the file is not a regular file of the expected shape.
  static func read(_ path: String, now: Int64) -> RefreshHold? {
    guard let fields = KeyValueFile.read(path), let until = fields["until"].flatMap({ Int64($0) }), until > now
    else { return nil }
    return RefreshHold(until: until, host: fields["host"] ?? "the provider", reason: fields["reason"] ?? "throttled")
  }

  /// Writes `hold` to `path` (`KeyValueFile`), or removes `path` for nil. Failures are ignored: a
  /// hold is advice.
  static func write(_ hold: RefreshHold?, to path: String) {
    guard let hold else {
      unlink(path)
      return
    }
    KeyValueFile.write([("until", String(hold.until)), ("host", hold.host), ("reason", hold.reason)], to: path)
  }
}
