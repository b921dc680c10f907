internal import CLibsecret

extension LibsecretStore {
  /// Forgets libsecret's process-wide Secret Service object (`secret_service_disconnect`), so the
  /// next operation connects and opens a session afresh.
  ///
  /// For a long-running process (the agent): it runs no GLib main loop, so the cached proxy never
  /// hears that the keyring daemon was replaced (its calls then go to a unique bus name that is
  /// gone) or that a collection was locked or unlocked. A one-shot process never needs it. Safe
  /// from any thread: operations under way keep their own reference.
  public static func forgetConnection() {
    secret_service_disconnect()
  }
}
