import BrokerBasics
import Glibc

/// The Azure CLI config directory `tokenbroker exec` gives COMMAND (`AZURE_CONFIG_DIR`) when it
/// serves an azure account: a fresh private directory, removed when COMMAND ends, holding copies of
/// the user's `config` (settings, the current cloud) and `clouds.config` (clouds registered with
/// `az cloud register`), and nothing else.
///
/// Why not the user's own directory: `az login --identity`, the way az is used under exec, writes
/// the managed identity into `azureProfile.json` as the default subscription's user (`assignedIdentityInfo:
/// MSI`) and its tokens into the MSAL caches; after exec the user's plain `az` would use an identity
/// whose endpoint no longer exists, and their own account would no longer be the default. Without
/// `azureProfile.json` and the MSAL caches in the copy, whatever az signs in to under exec goes
/// with COMMAND.
public struct AzureConfigOverlay: Sendable {
  /// The directory COMMAND gets as `AZURE_CONFIG_DIR`.
  public let directory: String

  /// The files copied from the user's directory.
  static let copied = ["config", "clouds.config"]

  /// Makes `RUNTIME/azure-XXXXXX` (0700) with `config` and `clouds.config` copied from the user's
  /// Azure CLI directory (`$AZURE_CONFIG_DIR`, else `$HOME/.azure`); a file that cannot be read is
  /// not copied (az then starts from its defaults).
  /// - Throws: `SystemError.call` when the directory cannot be made.
  public static func create(runtimeDirectory: String, environment: [String: String]) throws(SystemError)
    -> AzureConfigOverlay
  {
    var template = Array((runtimeDirectory + "/azure-XXXXXX").utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
      throw SystemError.call(
        what: "create an Azure CLI config directory in", path: runtimeDirectory, reason: Errno.current.description)
    }
    let overlay = AzureConfigOverlay(directory: String(cString: made))
    let source =
      environment["AZURE_CONFIG_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["HOME"].map { $0 + "/.azure" }
    guard let source else { return overlay }
    for name in copied {
      if let bytes = GcloudConfigOverlay.read(source + "/" + name) {
        _ = GcloudConfigOverlay.write(overlay.directory + "/" + name, bytes)
      }
    }
    return overlay
  }

  /// Removes the directory and whatever az wrote into it (not following symbolic links).
  public func remove() { GcloudConfigOverlay.removeTree(directory) }
}
