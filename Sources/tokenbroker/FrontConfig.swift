import BrokerWire
import Glibc

/// What the front needs from the config (interface.md §2, §2.1): the explicit config file, sent
/// with every request (the agent serves only callers of its own file, and answers "not served"
/// when that file says `[broker] agent = off`), and, only when no agent runs, whether one may be
/// started (`[broker] agent`, read with `KeyFileReader`: no GLib in the front).
enum FrontConfig {
  /// The `--config` / `TOKENBROKER_CONFIG` file as an absolute path, or "" for the default files.
  /// Environment only (and the working directory for a relative path): no file is opened.
  static func file(route: AgentRoute) -> String {
    guard let explicit = route.configFile ?? FileLocations(environment: env).explicitConfigFile else {
      return ""
    }
    return absolute(explicit)
  }

  /// True when `[broker] agent` is `auto` (also when absent) and the config can be read: an agent
  /// may be started for this call. Reads the config files (the cold path only).
  /// - Parameter file: `file(route:)`.
  static func agentEnabled(file: String) -> Bool {
    let files: [String]
    if !file.isEmpty {
      // An explicit file that cannot be read is the full program's error to report.
      guard access(file, R_OK) == 0 else { return false }
      files = [file]
    } else {
      files = FileLocations(environment: env).defaultConfigFiles
    }
    return (KeyFileReader.value(group: "broker", key: "agent", files: files) ?? "auto") == "auto"
  }

  /// `path` made absolute against the working directory.
  static func absolute(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    guard let cwd = getcwd(nil, 0) else { return path }
    defer { free(cwd) }
    return String(cString: cwd) + "/" + path
  }

  private static func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
