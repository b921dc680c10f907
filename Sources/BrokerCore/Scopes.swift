/// An OAuth scope set: unique scope strings in sorted order.
///
/// Access tokens are cached per account and *exact* scope set (interface.md §7: the `scopes`
/// attribute is the set, sorted, space separated), so two requests that list the same scopes in
/// another order share one cached token.
public struct ScopeSet: Sendable, Hashable, CustomStringConvertible {
  /// The scopes, sorted and without duplicates.
  public let items: [String]

  public init<S: Sequence>(_ scopes: S) where S.Element == String {
    self.items = Array(Set(scopes.filter { !$0.isEmpty })).sorted()
  }

  /// Parses a space-separated list (runs of spaces or tabs separate items).
  public init(parsing list: String) {
    self.init(ScopeSet.split(list))
  }

  /// The canonical form: sorted, space separated. Used as the `scopes` attribute.
  public var canonical: String { items.joined(separator: " ") }
  public var description: String { canonical }
  public var isEmpty: Bool { items.isEmpty }

  /// Splits a config list value on runs of white space (interface.md §2.1: lists are space separated).
  public static func split(_ list: String) -> [String] {
    list.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
  }
}
