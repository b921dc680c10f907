import BrokerWire
import Testing

@testable import BrokerCLI

@Suite struct CommandTableTests {
  /// The `--NAME` words of a text, `--KEY` (account add's placeholder) left out.
  private func optionNames(_ text: String) -> Set<String> {
    var names = Set<String>()
    var rest = Substring(text)
    while let r = rest.range(of: "--") {
      let word = rest[r.upperBound...].prefix { $0.isLowercase || $0 == "-" || $0.isUppercase }
      if !word.isEmpty && word != "KEY" && word.first?.isLowercase == true { names.insert(String(word)) }
      rest = rest[r.upperBound...]
    }
    return names
  }

  @Test func eachUsageLineNamesExactlyItsDeclaredOptions() {
    for command in CommandTable.all {
      let declared = Set(command.forms.flatMap(\.options).map(\.name))
      #expect(optionNames(command.usage) == declared, "\(command.name)")
      #expect(command.usage.hasPrefix("usage: tokenbroker "), "\(command.name)")
      for form in command.forms {
        if let sub = form.subcommand { #expect(command.usage.contains(sub), "\(command.name) \(sub)") }
      }
    }
  }

  @Test func namesAreUniqueAndHelpTopicsDeclared() {
    let names = CommandTable.all.map(\.name)
    #expect(Set(names).count == names.count)
    for command in CommandTable.all {
      #expect(CommandTable.command(command.helpTopic) != nil)
      #expect(command.listing.isEmpty == (command.helpTopic != command.name), "\(command.name)")
      #expect(!command.forms.isEmpty)
      #expect(command.forms.allSatisfy { $0.subcommand == nil } || command.forms.allSatisfy { $0.subcommand != nil })
    }
    #expect(CommandTable.command("frobnicate") == nil)
  }

  @Test func theAgentRunsTheGitActionsAndTokenGetOnly() {
    let served = CommandTable.all.flatMap { c in c.forms.filter(\.agentRuns).map { [c.name, $0.subcommand].compactMap { $0 } } }
    #expect(served == [["token", "get"], ["get"], ["store"], ["erase"], ["capability"]])
    let input = CommandTable.all.filter { $0.forms.contains(where: \.readsInput) }.map(\.name)
    #expect(input == ["get", "store", "erase"])
  }
}

@Suite struct AgentRouteDeclarationTests {
  /// Every declared form that the agent runs is routed, every other one is not.
  @Test func theRouteIsTheDeclaration() {
    for command in CommandTable.all {
      for form in command.forms {
        let words = [command.name] + (form.subcommand.map { [$0] } ?? []) + form.arguments.prefix(1).map { _ in "work" }
        let route = AgentRoute.classify(["tokenbroker"] + words)
        #expect((route != nil) == form.agentRuns, "\(words)")
        #expect(route?.readsInput ?? false == form.readsInput, "\(words)")
      }
    }
  }
}

@Suite struct GlobalOptionDeclarationTests {
  /// The global options declared are the ones the shared scanner reads.
  @Test func theScannerReadsTheDeclaredGlobalOptions() {
    #expect(CommandTable.globalOptions.map(\.name) == ["config", "verbose"])
    let scan = GlobalOptionScan(["--config", "f", "--verbose", "x"])
    #expect(scan.configFile == "f" && scan.verbose && scan.words == ["x"])
  }
}
