import BrokerCore
import CBrokerShims
import Glibc
import Synchronization

/// The desktop's notification server, `org.freedesktop.Notifications` (the Desktop
/// Notifications Specification 1.2), on one long-lived session-bus connection of GLib's GDBus:
/// servers such as dunst send `ActionInvoked` and `NotificationClosed` only to the connection that
/// posted (interface.md §8.1). The connection and its signal subscription live on a thread of
/// their own that runs a GLib main loop, which delivers the signals to `events`; method calls are
/// blocking GDBus calls, each on a dedicated thread (`DedicatedThread`), bounded by `callBound`.
/// A call the bus cannot deliver (no server, `ServiceUnknown`) or that fails otherwise is nil or
/// empty: never an error for the caller.
public final class DesktopNotifications: Sendable {
  /// What the server said of a notification.
  public enum Event: Sendable, Equatable {
    /// `ActionInvoked`: the user chose `action` (`default`, or a key the notification listed).
    case actionInvoked(id: UInt32, action: String)
    /// `NotificationClosed`: 1 expired, 2 dismissed by the user, 3 closed by `CloseNotification`,
    /// 4 undefined.
    case closed(id: UInt32, reason: UInt32)
  }

  /// One notification: `Notify`'s arguments but `replaces_id`.
  public struct Notice: Sendable, Equatable {
    public var appName: String
    public var summary: String
    public var body: String
    /// Pairs of action key and label, in order.
    public var actions: [(key: String, label: String)]
    /// `urgency` hint (0 low, 1 normal, 2 critical).
    public var urgency: UInt8
    /// `resident` hint: the server keeps it after an action is invoked.
    public var resident: Bool
    /// Milliseconds; 0: never expires, -1: the server's default.
    public var expireTimeout: Int32

    public init(
      appName: String, summary: String, body: String, actions: [(key: String, label: String)], urgency: UInt8,
      resident: Bool, expireTimeout: Int32
    ) {
      self.appName = appName
      self.summary = summary
      self.body = body
      self.actions = actions
      self.urgency = urgency
      self.resident = resident
      self.expireTimeout = expireTimeout
    }

    public static func == (a: Notice, b: Notice) -> Bool {
      a.appName == b.appName && a.summary == b.summary && a.body == b.body && a.urgency == b.urgency
        && a.resident == b.resident && a.expireTimeout == b.expireTimeout
        && a.actions.map(\.key) == b.actions.map(\.key) && a.actions.map(\.label) == b.actions.map(\.label)
    }
  }

  /// Milliseconds a method call may take (a server started by D-Bus activation included).
  public static let callBound: Int32 = 10_000

  static let name = "org.freedesktop.Notifications"
  static let path = "/org/freedesktop/Notifications"

  private let connection: GObjectBox
  private let loop: GObjectBox

  private init(connection: GObjectBox, loop: GObjectBox) {
    self.connection = connection
    self.loop = loop
  }

  deinit { g_main_loop_quit(loop.pointer) }

  /// Connects to the session bus at `address` and subscribes to the server's signals.
  /// - Parameter events: called on the connection's thread for each signal; it must not block.
  /// - Returns: nil when the bus cannot be reached (`detail` gets GLib's message).
  public static func connect(
    address: String, events: @escaping @Sendable (Event) -> Void, detail: @escaping @Sendable (String) -> Void = { _ in }
  ) async -> DesktopNotifications? {
    await withCheckedContinuation { (continuation: CheckedContinuation<DesktopNotifications?, Never>) in
      do {
        try DedicatedThread.detach(for: "desktop notifications") {
          serve(address: address, events: events, detail: detail) { continuation.resume(returning: $0) }
        }
      } catch let error as SystemError {
        detail(error.description)
        continuation.resume(returning: nil)
      } catch {
        continuation.resume(returning: nil)
      }
    }
  }

  /// The connection's thread: connects, subscribes, hands the object to `ready`, then runs the
  /// main loop until the object is gone.
  private static func serve(
    address: String, events: @escaping @Sendable (Event) -> Void, detail: @Sendable (String) -> Void,
    ready: (DesktopNotifications?) -> Void
  ) {
    let context = g_main_context_new()
    g_main_context_push_thread_default(context)
    defer {
      g_main_context_pop_thread_default(context)
      g_main_context_unref(context)
    }
    var error: UnsafeMutablePointer<GError>?
    let flags = GDBusConnectionFlags(
      rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
    guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, nil, &error) else {
      detail(error.map { String(cString: $0.pointee.message) } ?? "no connection")
      if let error { g_error_free(error) }
      ready(nil)
      return
    }
    let box = Unmanaged.passRetained(EventSink(events)).toOpaque()
    let subscription = g_dbus_connection_signal_subscribe(
      // Any sender: the server's unique name is what signals carry; ids tell its notifications.
      connection, nil, name, nil, path, nil, G_DBUS_SIGNAL_FLAGS_NONE,
      { _, _, _, _, signal, parameters, user in
        guard let user, let signal, let parameters else { return }
        let sink = Unmanaged<EventSink>.fromOpaque(user).takeUnretainedValue()
        if let event = DesktopNotifications.event(String(cString: signal), parameters) { sink.events(event) }
      }, box, { user in if let user { Unmanaged<EventSink>.fromOpaque(user).release() } })
    let loop = g_main_loop_new(context, 0)!
    // The object holds references of its own: the thread drops its own once the loop has ended.
    let notifications = DesktopNotifications(
      connection: GObjectBox(OpaquePointer(g_object_ref(UnsafeMutableRawPointer(connection))), free: { g_object_unref(UnsafeMutableRawPointer($0)) }),
      loop: GObjectBox(g_main_loop_ref(loop), free: { g_main_loop_unref($0) }))
    ready(notifications)
    g_main_loop_run(loop)
    g_dbus_connection_signal_unsubscribe(connection, subscription)
    g_main_loop_unref(loop)
    g_object_unref(UnsafeMutableRawPointer(connection))
  }

  /// The event a signal's `parameters` carry: `ActionInvoked` `(us)`, `NotificationClosed` `(uu)`.
  static func event(_ signal: String, _ parameters: OpaquePointer) -> Event? {
    guard g_variant_n_children(parameters) == 2 else { return nil }
    let first = g_variant_get_child_value(parameters, 0)
    let second = g_variant_get_child_value(parameters, 1)
    defer {
      g_variant_unref(first)
      g_variant_unref(second)
    }
    guard Self.isType(first, "u") else { return nil }
    let id = g_variant_get_uint32(first)
    switch signal {
    case "ActionInvoked" where Self.isType(second, "s"):
      return .actionInvoked(id: id, action: String(cString: g_variant_get_string(second, nil)))
    case "NotificationClosed" where Self.isType(second, "u"):
      return .closed(id: id, reason: g_variant_get_uint32(second))
    default: return nil
    }
  }

  static func isType(_ value: OpaquePointer?, _ type: String) -> Bool {
    guard let value else { return false }
    return String(cString: g_variant_get_type_string(value)) == type
  }

  /// `GetCapabilities`: e.g. `actions`, `body`, `persistence`; empty when it failed.
  public func capabilities() async -> [String] {
    let connection = self.connection
    return (try? await DedicatedThread.run { () -> [String] in
      guard let reply = Self.call(connection.pointer, "GetCapabilities", nil) else { return [] }
      defer { g_variant_unref(reply) }
      let list = g_variant_get_child_value(reply, 0)
      defer { g_variant_unref(list) }
      guard Self.isType(list, "as") else { return [] }
      return (0..<g_variant_n_children(list)).map { i in
        let item = g_variant_get_child_value(list, i)
        defer { g_variant_unref(item) }
        return String(cString: g_variant_get_string(item, nil))
      }
    }) ?? []
  }

  /// `Notify`: posts `notice`, replacing notification `replacing` (0: a new one).
  /// - Returns: the server's id for it (0 from a server that keeps none), or nil when it failed
  ///   (no server on the bus: `detail` gets the D-Bus error).
  public func notify(_ notice: Notice, replacing: UInt32, detail: @escaping @Sendable (String) -> Void = { _ in }) async
    -> UInt32?
  {
    let connection = self.connection
    return try? await DedicatedThread.run { () -> UInt32? in
      let words: [String] = notice.actions.flatMap { [$0.key, $0.label] }
      var actions: [UnsafePointer<CChar>?] = words.map { UnsafePointer(strdup($0)) }
      defer { for a in actions { free(UnsafeMutablePointer(mutating: a)) } }
      var hints: [OpaquePointer?] = [
        g_variant_new_dict_entry(g_variant_new_string("urgency"), g_variant_new_variant(g_variant_new_byte(notice.urgency))),
        g_variant_new_dict_entry(
          g_variant_new_string("resident"), g_variant_new_variant(g_variant_new_boolean(notice.resident ? 1 : 0))),
      ]
      let hintType = g_variant_type_new("{sv}")
      defer { g_variant_type_free(hintType) }
      var arguments: [OpaquePointer?] = [
        g_variant_new_string(notice.appName), g_variant_new_uint32(replacing), g_variant_new_string(""),
        g_variant_new_string(notice.summary), g_variant_new_string(notice.body),
        actions.withUnsafeMutableBufferPointer { g_variant_new_strv($0.baseAddress, Int($0.count)) },
        g_variant_new_array(hintType, &hints, gsize(hints.count)), g_variant_new_int32(notice.expireTimeout),
      ]
      let tuple = g_variant_new_tuple(&arguments, gsize(arguments.count))
      guard let reply = Self.call(connection.pointer, "Notify", tuple, detail: detail) else { return nil }
      defer { g_variant_unref(reply) }
      let id = g_variant_get_child_value(reply, 0)
      defer { g_variant_unref(id) }
      return Self.isType(id, "u") ? g_variant_get_uint32(id) : nil
    } ?? nil
  }

  /// `CloseNotification`: takes notification `id` down (the server answers `NotificationClosed`
  /// reason 3).
  public func close(_ id: UInt32) async {
    let connection = self.connection
    _ = try? await DedicatedThread.run {
      var argument: OpaquePointer? = g_variant_new_uint32(id)
      if let reply = Self.call(connection.pointer, "CloseNotification", g_variant_new_tuple(&argument, 1)) {
        g_variant_unref(reply)
      }
    }
  }

  /// One blocking method call of the server's interface with `arguments` (a floating tuple, or
  /// nil); the reply, or nil when it failed. Blocks: only on a dedicated thread.
  private static func call(
    _ connection: OpaquePointer, _ method: String, _ arguments: OpaquePointer?, detail: (String) -> Void = { _ in }
  ) -> OpaquePointer? {
    var error: UnsafeMutablePointer<GError>?
    let reply = g_dbus_connection_call_sync(
      connection, name, path, name, method, arguments, nil, G_DBUS_CALL_FLAGS_NONE, callBound, nil, &error)
    if let error {
      detail(String(cString: error.pointee.message))
      g_error_free(error)
    }
    return reply
  }
}

/// Where a signal goes: kept alive by the subscription, released by it.
private final class EventSink: Sendable {
  let events: @Sendable (DesktopNotifications.Event) -> Void
  init(_ events: @escaping @Sendable (DesktopNotifications.Event) -> Void) { self.events = events }
}

/// A GLib object the connection's thread made, freed with it. GDBus connections and main loops
/// may be used from any thread (GIO's documentation of GDBusConnection and GMainLoop).
private final class GObjectBox: @unchecked Sendable {
  let pointer: OpaquePointer
  private let free: (OpaquePointer) -> Void
  init(_ pointer: OpaquePointer, free: @escaping (OpaquePointer) -> Void) {
    self.pointer = pointer
    self.free = free
  }
  deinit { free(pointer) }
}
