import BrokerWire
import Glibc

/// What the front needs from the config before choosing the agent: the explicit config file and
/// `[broker] agent` (interface.md §2, §2.1), read with `KeyFileReader` (no GLib in the front).
struct FrontConfig {
  /// The `--config` / `TOKENBROKER_CONFIG` file as an absolute path, or "" for the default files.
  let file: String
  /// True when `[broker] agent` is `auto` (also when absent) and the config can be read.
  let agentEnabled: Bool

  init(route: AgentRoute) {
    func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
    let files: [String]
    if let explicit = route.configFile ?? env("TOKENBROKER_CONFIG").flatMap({ $0.isEmpty ? nil : $0 }) {
      file = Self.absolute(explicit)
      files = [file]
    } else {
      file = ""
      let home = env("HOME").flatMap { $0.isEmpty ? nil : $0 } ?? "/"
      let configHome = env("XDG_CONFIG_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.config"
      files = ["/etc/tokenbroker/config", configHome + "/tokenbroker/config"]
    }
    // An explicit file that cannot be read is the full program's error to report.
    if !file.isEmpty && access(file, R_OK) != 0 {
      agentEnabled = false
    } else {
      agentEnabled = (KeyFileReader.value(group: "broker", key: "agent", files: files) ?? "auto") == "auto"
    }
  }

  /// `path` made absolute against the working directory.
  static func absolute(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    guard let cwd = getcwd(nil, 0) else { return path }
    defer { free(cwd) }
    return String(cString: cwd) + "/" + path
  }
}
