import BrokerCore
import BrokerWire
import Testing

@testable import BrokerCLI

@Suite struct HelpTests {
  @Test func everyCommandHasItsHelpAndTheTopHelpListsEachOnce() throws {
    for command in CommandTable.all {
      let text = try #require(Help.command(command.name, []), "\(command.name)")
      #expect(text.hasPrefix(command.usage + "\n\n"))
      #expect(text.count > command.usage.count + 40, "\(command.name) has no description")
      for line in command.listing {
        let row = Help.top.split(separator: "\n").filter { $0.hasPrefix("  " + line.synopsis + " ") }
        #expect(row.count == 1, "\(line.synopsis)")
        #expect(row.first?.hasSuffix(line.summary) == true)
        #expect(row.first.map { $0.count - line.summary.count } == 41, "\(line.synopsis): the summaries start at column 41")
      }
    }
    #expect(Help.command("help", []) == nil)
  }

  /// Every option of a command's form is described in its `--help` text, below the usage line.
  @Test func everyOptionIsDescribed() throws {
    for command in CommandTable.all {
      let text = try #require(Help.command(command.name, [])).dropFirst(command.usage.count)
      for option in command.forms.flatMap(\.options) {
        #expect(text.contains("--" + option.name), "\(command.name) --\(option.name)")
      }
    }
  }

  @Test func theDeclaredValuesAreTheParsersValues() {
    #expect(CommandTable.formats == TokenFormat.allCases.map(\.rawValue))
    #expect(CommandTable.providers == ProviderKind.allCases.map(\.rawValue))
  }

  @Test func theDeclarationsDumpIsJSON() throws {
    let text = DeclarationDump.json()
    #expect(text.hasPrefix("{\"accountKeys\":["))
    #expect(text.contains("\"name\":\"token\""))
    #expect(!text.contains("\n"))
  }
}
