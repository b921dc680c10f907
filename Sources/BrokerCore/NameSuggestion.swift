/// "Did you mean": the known name a mistyped one most likely stands for (config keys, account
/// names). A name matches when it differs only in case and `_` for `-` (`client_id`), or by a
/// small optimal-string-alignment distance (one insertion, deletion, substitution or swap of two
/// neighbours counts 1): at most 1 for names of up to 4 characters, 2 for longer ones; else, when
/// the name is the start of exactly one known name and at least 4 characters long (`--device` for
/// `--device-code`), that one.
public enum NameSuggestion {
  /// - Returns: the closest of `known` to `name`, or nil when none is close (or `name` is one of them).
  public static func closest(to name: String, among names: some Sequence<String>) -> String? {
    let known = Array(names)
    let wanted = normalised(name)
    var best: (name: String, distance: Int)?
    for candidate in known where candidate != name {
      let d = candidate == wanted || normalised(candidate) == wanted ? 0 : distance(Array(wanted), Array(normalised(candidate)))
      if d <= (wanted.count <= 4 ? 1 : 2), d < (best?.distance ?? .max) { best = (candidate, d) }
    }
    if best == nil, wanted.count >= 4, !known.contains(name) {
      let longer = Set(known.filter { normalised($0).hasPrefix(wanted) })
      if longer.count == 1 { return longer.first }
    }
    return best?.name
  }

  /// `text`, then ` (did you mean 'X'?)` when one of `known` is close to `name`.
  public static func appending(to text: String, for name: String, among known: some Sequence<String>) -> String {
    guard let match = closest(to: name, among: known) else { return text }
    return text + " (did you mean '\(match)'?)"
  }

  private static func normalised(_ s: String) -> String {
    String(s.lowercased().map { $0 == "_" ? "-" : $0 })
  }

  /// Optimal string alignment distance (Damerau-Levenshtein with adjacent swaps, no re-edits).
  private static func distance(_ a: [Character], _ b: [Character]) -> Int {
    if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
    var previous2 = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    for i in 1...a.count {
      var row = [Int](repeating: 0, count: b.count + 1)
      row[0] = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { row[j] = min(row[j], previous2[j - 2] + 1) }
      }
      previous2 = previous
      previous = row
    }
    return previous[b.count]
  }
}
