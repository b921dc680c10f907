import BrokerWire
import Testing

@Suite struct AgentRouteTests {
  private func route(_ argv: String...) -> AgentRoute? { AgentRoute.classify(argv) }

  @Test func gitHelperActionsGoToTheAgent() throws {
    for action in ["get", "store", "erase", "capability"] {
      let r = try #require(route("/usr/bin/tokenbroker", action))
      #expect(r.name == "tokenbroker")
      #expect(r.readsInput == (action != "capability"))
      let g = try #require(route("/usr/local/bin/git-credential-tokenbroker", action))
      #expect(g.name == "git-credential-tokenbroker")
      #expect(g.arguments == [action])
    }
    #expect(route("git-credential-tokenbroker", "frobnicate") == nil)
    #expect(route("git-credential-tokenbroker") == nil)
    #expect(route("tokenbroker", "get", "extra") == nil)
  }

  /// The name is argv[0]'s last path component, by bytes (a non-ASCII directory, a trailing slash).
  @Test func theNameIsTheLastPathComponent() throws {
    #expect(try #require(route("./b\u{00E9}n/git-credential-tokenbroker", "get")).name == "git-credential-tokenbroker")
    #expect(try #require(route("/opt/\u{1F511}/tokenbroker", "get")).name == "tokenbroker")
    #expect(try #require(route("tokenbroker/", "get")).name == "")
    #expect(try #require(route("/x//tokenbroker", "token", "get", "work")).name == "tokenbroker")
  }

  /// `token get --wait SECONDS` gives the agent that much longer to answer (interface.md §8.1).
  @Test func waitSecondsAreReadFromTheArguments() throws {
    #expect(try #require(route("tokenbroker", "token", "get", "work", "--wait", "30")).waitSeconds == 30)
    #expect(try #require(route("tokenbroker", "token", "get", "work", "--wait=5")).waitSeconds == 5)
    #expect(try #require(route("tokenbroker", "token", "get", "work")).waitSeconds == 0)
    #expect(try #require(route("tokenbroker", "token", "get", "work", "--wait", "x")).waitSeconds == 0)
    #expect(try #require(route("tokenbroker", "token", "get", "work", "--wait", "9999999")).waitSeconds == 86_400)
  }

  @Test func dockerHelperActionsGoToTheAgent() throws {
    for action in ["get", "store", "erase", "list"] {
      let r = try #require(route("docker-credential-tokenbroker", action))
      #expect(r.readsInput == (action != "list"))
    }
    #expect(route("docker-credential-tokenbroker", "version") == nil)
  }

  @Test func tokenGetGoesToTheAgentWithConfigTakenOut() throws {
    let r = try #require(route("tokenbroker", "--verbose", "token", "get", "work", "--config", "c.ini", "--format", "json"))
    #expect(r.arguments == ["--verbose", "token", "get", "work", "--format", "json"])
    #expect(r.configFile == "c.ini")
    #expect(!r.readsInput)
    #expect(try #require(route("tokenbroker", "--config=/x", "get")).configFile == "/x")
  }

  @Test func everythingElseRunsInTheFullProgram() {
    for argv in [
      ["tokenbroker"], ["tokenbroker", "login", "work"], ["tokenbroker", "token"], ["tokenbroker", "token", "list"],
      ["tokenbroker", "token", "get", "work", "--help"], ["tokenbroker", "-h", "get"], ["tokenbroker", "--", "get"],
      ["tokenbroker", "get", "--config"], ["tokenbroker", "agent", "status"], ["tokenbroker", "logout", "work"],
      ["tokenbroker", "--bogus", "get"], ["tokenbroker", "token get", "work"], ["tokenbroker", "get extra"],
      ["git-credential-tokenbroker", "token get"], [],
    ] {
      #expect(AgentRoute.classify(argv) == nil, "\(argv)")
    }
  }
}
