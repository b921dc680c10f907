public import BrokerCore
internal import CBrokerShims
internal import Dispatch

/// Deriving an encrypted store's key from its passphrase within the memory this process may take
/// (bug-cases-3.md X15). Argon2id's memory is paid at every unlock, on whatever machine or
/// container opens the file, so:
/// - a store's `memLimit` is compared with `MemoryRoom` before the passphrase is asked for, and
///   one that cannot fit is `StoreError.outOfMemory` naming both (never a wrong passphrase: a
///   user would delete a good store); an allocation that fails all the same is reported alike,
///   with the room measured again then;
/// - a new store takes the strongest of `newStoreLevels` that fits with `headroom` to spare and
///   whose work area could really be allocated, and records it in its header, so the next unlock
///   in the same limits fits too.
/// Before the passphrase the room is an estimate: the threads that read the passphrase and run
/// Argon2id, and the malloc arenas glibc gives them (64 MiB of address space each), come later
/// and count against `RLIMIT_AS` too. An rlimit fails the allocation cleanly, so the allocation
/// itself decides there; the estimate matters for cgroups and the machine, where going over
/// means the OOM killer.
public enum KeyDerivation {
  /// What new stores use, strongest first: libsodium's INTERACTIVE limits (2 passes over 64 MiB,
  /// about 0.1 s here), then, where less memory is allowed, 3 passes over 32, 16 or 8 MiB
  /// (libsodium's advice: fix opslimit at 3 and adjust the memory; protocols-2.md §4.2).
  public static let newStoreLevels: [(opsLimit: UInt32, memLimit: UInt64)] = [
    (KDFParameters.defaultOpsLimit, KDFParameters.defaultMemLimit), (3, 32 << 20), (3, 16 << 20), (3, 8 << 20),
  ]
  /// Bytes a new store leaves free beside Argon2id's work area (thread stacks, buffers).
  static let headroom: UInt64 = 16 << 20

  /// Makes this process's room predictable: threads get no malloc arenas of their own (glibc
  /// reserves 64 MiB of address space for each, which `RLIMIT_AS` counts, so two runs of one
  /// command could differ by that much and a store created in a limit might not open again in
  /// it). Effective only while no other thread has allocated yet, so it is called at the top of
  /// `main`, before any `await` (`BrokerCommand.prepareProcess`). For a process that derives a
  /// key and exits (`unlock`), not for the agent.
  public static func prepareProcess() { _ = cbroker_single_malloc_arena() }

  /// `MemoryRoom.current()`, read off the cooperative pool.
  public static func room() async -> MemoryRoom {
    (try? await BlockingQueue.run(on: DispatchQueue.global()) { MemoryRoom.current() }) ?? .unlimited
  }

  /// Throws unless the `parameters.memLimit` bytes of an existing store fit in `room`.
  /// - Throws: `StoreError.outOfMemory` naming `path`, the MiB needed and the limit.
  public static func check(_ parameters: KDFParameters, room: MemoryRoom, path: String) throws(StoreError) {
    if let bytes = room.bytes, parameters.memLimit > bytes {
      throw .outOfMemory(path: path, neededMiB: parameters.memLimit >> 20, room: room.description, newStore: false)
    }
  }

  /// The limits a new store may take in `room`, strongest first, each with `headroom` to spare,
  /// all with one fresh salt.
  /// - Throws: `StoreError.outOfMemory` (`newStore`) when not even the smallest level fits.
  public static func newStoreCandidates(room: MemoryRoom, path: String) throws(StoreError) -> [KDFParameters] {
    let salt = KDFParameters.fresh().salt
    let fitting = newStoreLevels.filter { level in room.bytes.map { level.memLimit + headroom <= $0 } ?? true }
    guard !fitting.isEmpty else {
      let smallest = newStoreLevels.last!.memLimit
      throw .outOfMemory(path: path, neededMiB: (smallest + headroom) >> 20, room: room.description, newStore: true)
    }
    return fitting.map { KDFParameters(salt: salt, opsLimit: $0.opsLimit, memLimit: $0.memLimit) }
  }

  /// The key of the existing store at `path` (Argon2id with its header's `parameters`), off the
  /// cooperative pool. `passphrase` is copied and the copy zeroed; the caller zeroes its own.
  /// - Throws: `StoreError.outOfMemory` naming `path` and the room left; `.crypto`.
  public static func derive(passphrase: [UInt8], parameters: KDFParameters, path: String) async throws -> StoreKey {
    do {
      return try await run(passphrase, parameters)
    } catch StoreError.outOfMemory(_, let needed, let room, _) {
      throw StoreError.outOfMemory(path: path, neededMiB: needed, room: room, newStore: false)
    }
  }

  /// The key of a new store: the first of `candidates` (`newStoreCandidates`) whose work area
  /// could be allocated.
  /// - Throws: `StoreError.outOfMemory` (`newStore`) when none could; `.crypto`.
  public static func deriveNew(passphrase: [UInt8], candidates: [KDFParameters], path: String) async throws -> StoreKey {
    var room = ""
    for parameters in candidates {
      do { return try await run(passphrase, parameters) } catch StoreError.outOfMemory(_, _, let left, _) { room = left }
    }
    let smallest = ((candidates.last?.memLimit ?? 0) + headroom) >> 20
    throw StoreError.outOfMemory(path: path, neededMiB: smallest, room: room, newStore: true)
  }

  /// Argon2id on a thread of its own; a failed allocation carries the room measured there and
  /// then (that thread's stack and arena counted).
  private static func run(_ passphrase: [UInt8], _ parameters: KDFParameters) async throws -> StoreKey {
    try await BlockingQueue.run(on: DispatchQueue.global()) {
      var copy = passphrase
      do {
        return try Sodium.deriveKey(passphrase: &copy, parameters: parameters)
      } catch StoreError.outOfMemory(let path, let needed, _, let newStore) {
        throw StoreError.outOfMemory(path: path, neededMiB: needed, room: MemoryRoom.current().description, newStore: newStore)
      }
    }
  }
}
