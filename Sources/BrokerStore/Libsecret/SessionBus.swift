internal import BrokerWire
internal import Glibc

/// The session bus the Secret Service is reached on. GLib takes `DBUS_SESSION_BUS_ADDRESS`, else
/// `$XDG_RUNTIME_DIR/bus`; a cron job started without pam_systemd has neither, while the user's
/// session bus (systemd's `dbus.socket`) listens at `/run/user/$UID/bus`.
public enum SessionBus {
  /// The address to use when the environment names none: `unix:path=/run/user/$UID/bus` when
  /// `/run/user/$UID` is the user's private directory (`AgentEndpoint.runtimeDirectory`'s rule) and
  /// `bus` in it is a socket of the user's; nil when the environment names a bus
  /// (`DBUS_SESSION_BUS_ADDRESS`, or an absolute `XDG_RUNTIME_DIR`) or there is no such socket.
  /// - Parameters:
  ///   - environment: looks up one environment variable.
  ///   - uid: the real user id.
  ///   - userRuntimeRoot: where logind makes each user's runtime directory (`/run/user`).
  static func usersBusAddress(
    environment: (String) -> String?, uid: UInt32, userRuntimeRoot: String = AgentEndpoint.userRuntimeRoot
  ) -> String? {
    if let address = environment("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty { return nil }
    if let runtime = environment("XDG_RUNTIME_DIR"), runtime.hasPrefix("/") { return nil }
    let session = userRuntimeRoot + "/\(uid)"
    guard PrivateDirectory.check(session, create: false, exclusive: true, uid: uid) == nil else { return nil }
    var st = stat()
    guard lstat(session + "/bus", &st) == 0, (st.st_mode & S_IFMT) == S_IFSOCK, st.st_uid == uid else { return nil }
    return "unix:path=" + session + "/bus"
  }

  /// Sets `DBUS_SESSION_BUS_ADDRESS` to `usersBusAddress` when that is not nil. Call it while the
  /// process has one thread (`setenv` is not safe beside threads that read the environment).
  public static func adoptUsersBus() {
    let uid = getuid()
    guard let address = usersBusAddress(environment: { getenv($0).map { String(cString: $0) } }, uid: uid) else { return }
    setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
  }
}
