import BrokerBasics
import BrokerWire
import Glibc

/// The gcloud config directory `tokenbroker exec` gives COMMAND (`CLOUDSDK_CONFIG`) when it serves
/// a google account (bug-cases-3.md X10): a fresh private directory, removed when COMMAND ends,
/// holding a copy of the user's active configuration without its `[core] account`.
///
/// Why not the user's own directory: gcloud (`googlecloudsdk/core/credentials`) keeps its "am I
/// on Compute Engine?" answer in the file `gce` for 10 minutes, so a `False` from a run outside
/// exec would hide the endpoint and a `True` from a run under exec would send the next plain run to
/// a metadata server that is not there; and it records the metadata server's account in
/// `credentials.db` and caches its access tokens in `access_tokens.db`, where a plain `gcloud
/// --account EMAIL` would still find a token after exec. The copy keeps the user's properties
/// (region, zone, their own `project`, which gcloud prefers to the endpoint's); without the
/// `account` line gcloud takes the endpoint's. `gcloud config set` under exec changes the copy
/// only. google-auth reads `application_default_credentials.json` from the same directory: under
/// exec there is none, so it asks the endpoint.
public struct GcloudConfigOverlay: Sendable {
  /// The directory COMMAND gets as `CLOUDSDK_CONFIG`.
  public let directory: String

  /// Makes `RUNTIME/gcloud-XXXXXX` (0700) with `active_config` and
  /// `configurations/config_NAME` copied from the user's gcloud directory (`$CLOUDSDK_CONFIG`,
  /// else `$HOME/.config/gcloud`; NAME from `$CLOUDSDK_ACTIVE_CONFIG_NAME`, else its
  /// `active_config`, else `default`), the `[core]` `account` line left out. A configuration that
  /// cannot be read is not copied (gcloud then starts from its defaults).
  /// - Throws: `SystemError.call` when the directory cannot be made.
  public static func create(runtimeDirectory: String, environment: [String: String]) throws(SystemError)
    -> GcloudConfigOverlay
  {
    var template = Array((runtimeDirectory + "/gcloud-XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
      throw SystemError.call(what: "create a gcloud config directory in", path: runtimeDirectory, reason: Errno.current.description)
    }
    let overlay = GcloudConfigOverlay(directory: String(cString: made))
    let source =
      environment["CLOUDSDK_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
      ?? environment["HOME"].map { $0 + "/.config/gcloud" }
    guard let source else { return overlay }
    let named = environment["CLOUDSDK_ACTIVE_CONFIG_NAME"].flatMap { $0.isEmpty ? nil : $0 }
    let active =
      named ?? read(source + "/active_config").map { String(decoding: $0, as: UTF8.self).trimmed }.flatMap {
        $0.isEmpty ? nil : $0
      } ?? "default"
    guard !active.contains("/"), let properties = read(source + "/configurations/config_" + active) else { return overlay }
    _ = write(overlay.directory + "/active_config", Array(active.utf8))
    if mkdir(overlay.directory + "/configurations", 0o700) == 0 {
      _ = write(overlay.directory + "/configurations/config_" + active, withoutAccount(properties))
    }
    return overlay
  }

  /// Removes the directory and whatever gcloud wrote into it (not following symbolic links).
  public func remove() { Self.removeTree(directory) }

  /// Removes `path`, and first everything under it when it is a directory (`lstat`: a link is
  /// removed, never followed).
  static func removeTree(_ path: String) {
    var info = stat()
    guard lstat(path, &info) == 0 else { return }
    guard (info.st_mode & S_IFMT) == S_IFDIR else {
      unlink(path)
      return
    }
    var names: [String] = []
    if let dir = opendir(path) {
      while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name != "." && name != ".." { names.append(name) }
      }
      closedir(dir)
    }
    for name in names { removeTree(path + "/" + name) }
    rmdir(path)
  }

  /// A gcloud properties file (INI) without the `account` key of its `[core]` section.
  static func withoutAccount(_ bytes: [UInt8]) -> [UInt8] {
    var section = ""
    var kept: [String] = []
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false) {
      let text = line.trimmed
      if text.hasPrefix("[") && text.hasSuffix("]") { section = String(text.dropFirst().dropLast()).trimmed.lowercased() }
      let key = text.split(separator: "=", maxSplits: 1).first.map { $0.trimmed.lowercased() }
      if section == "core", key == "account", text.contains("=") { continue }
      kept.append(String(line))
    }
    return Array(kept.joined(separator: "\n").utf8)
  }

  /// A regular file's bytes (at most 1 MiB; a larger one is nil), never through a symbolic link.
  static func read(_ path: String) -> [UInt8]? {
    KeyFileReader.readFile(path, limit: (1 << 20) + 1, followLinks: false).flatMap { $0.count <= 1 << 20 ? $0 : nil }
  }

  /// Writes a new file (0600). - Returns: false when it could not be written whole.
  static func write(_ path: String, _ bytes: [UInt8]) -> Bool {
    let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    return n == bytes.count
  }
}

extension StringProtocol {
  /// Without leading and trailing spaces, tabs, CR and LF.
  fileprivate var trimmed: String {
    let blank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
    return String(String.UnicodeScalarView(unicodeScalars.drop(while: blank).reversed().drop(while: blank).reversed()))
  }
}
