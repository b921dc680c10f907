/// Where tokenbroker's files are, by the XDG Base Directory rules (interface.md §2): the one rule
/// the front and the full program both follow. A variable that is unset, empty or not an absolute
/// path counts as unset (XDG Base Directory Specification); `HOME` unset or empty is `/`.
public struct FileLocations {
  /// The system-wide config file, read before the user's.
  public static let systemConfigFile = "/etc/tokenbroker/config"

  private let environment: (String) -> String?

  /// - Parameter environment: looks up one variable (the front passes `getenv`, so that no
  ///   Dictionary is built on its path).
  public init(environment: @escaping (String) -> String?) { self.environment = environment }

  /// `$HOME`, or `/`.
  public var home: String { environment("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? "/" }

  /// `$NAME` when it is an absolute path, else `$HOME/fallback`.
  public func base(_ name: String, fallback: String) -> String {
    if let value = environment(name), value.utf8.first == UInt8(ascii: "/") { return value }
    return home + "/" + fallback
  }

  /// `$XDG_CONFIG_HOME/tokenbroker/config` (`~/.config/tokenbroker/config`).
  public var userConfigFile: String { base("XDG_CONFIG_HOME", fallback: ".config") + "/tokenbroker/config" }

  /// `TOKENBROKER_CONFIG` when set and not empty: the only file read, as `--config` (which wins over it).
  public var explicitConfigFile: String? { environment("TOKENBROKER_CONFIG").flatMap { $0.isEmpty ? nil : $0 } }

  /// The config files read without `--config` or `TOKENBROKER_CONFIG`, in order (a later one
  /// overrides key by key).
  public var defaultConfigFiles: [String] { [Self.systemConfigFile, userConfigFile] }

  /// `$XDG_DATA_HOME/tokenbroker` (`~/.local/share/tokenbroker`): the file stores.
  public var dataDirectory: String { base("XDG_DATA_HOME", fallback: ".local/share") + "/tokenbroker" }

  /// `$XDG_CACHE_HOME/tokenbroker` (`~/.cache/tokenbroker`): discovery documents.
  public var cacheDirectory: String { base("XDG_CACHE_HOME", fallback: ".cache") + "/tokenbroker" }
}
