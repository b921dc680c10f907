@testable import BrokerCLI
import BrokerCore
import Testing

@Suite struct DockerHelperCommandTests {
  static let config = fileStoreConfig + """
     europe-west1-docker.pkg.dev registry.example.test:5000 myreg.azurecr.io *.pkg.example.test

    [host dev.example.test]
    account = work
    username = dev-user
    """

  @Test(arguments: [
    ("https://europe-west1-docker.pkg.dev", "europe-west1-docker.pkg.dev"),
    ("europe-west1-docker.pkg.dev", "europe-west1-docker.pkg.dev"),
    ("https://Registry.Example.TEST:5000/v2/", "registry.example.test:5000"),
    ("registry.example.test:5000/path?q#f", "registry.example.test:5000"),
    ("https://user@index.docker.io/v1/", "index.docker.io"),
    ("http://[::1]:5000", "[::1]:5000"),
  ])
  func registryHosts(address: String, host: String) { #expect(RegistryAddress.host(of: address) == host) }

  @Test(arguments: ["", "https://", "https:///v2", "bad host", "a\u{7}b"])
  func unreadableAddresses(address: String) { #expect(RegistryAddress.host(of: address) == nil) }

  @Test func azureContainerRegistry() {
    #expect(RegistryKind.defaultKind(host: "myreg.azurecr.io") == .acr)
    #expect(RegistryKind.defaultKind(host: "MyReg.AzureCR.io:443") == .acr)
    #expect(RegistryKind.defaultKind(host: "azurecr.io.example.test") == nil)
    #expect(RegistryKind.defaultKind(host: "azurecr.io") == nil)
  }

  @Test func unmatchedRegistryIsTheNotFoundReplyWithStatus1() async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(["get"], input: "https://other.example.test\n", argv0: "/x/docker-credential-tokenbroker") == 1)
    #expect(h.stdout == "credentials not found in native keychain\n")
    #expect(h.stderr.isEmpty)
  }

  /// Y12: "not signed in" is one line that begins with the not-found phrase, which clients that
  /// collect every registry's credentials (docker-py) take as "none here" and go on.
  @Test func Y12_notSignedInIsTheNotFoundPhraseWithTokenbrokersWordsAndStatus3() async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(["get"], input: "europe-west1-docker.pkg.dev", argv0: "docker-credential-tokenbroker") == 3)
    #expect(h.stdout.hasPrefix("credentials not found in native keychain (tokenbroker: "))
    #expect(h.stdout.hasSuffix(")\n") && h.stdout.split(separator: "\n").count == 1)
    #expect(h.stdout.contains("tokenbroker login work"))
    #expect(h.stderr == h.stdout)
  }

  @Test func azureContainerRegistryNotSignedInAsksNothingOfTheRegistry() async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(["get"], input: "https://myreg.azurecr.io/", argv0: "docker-credential-tokenbroker") == 3)
    #expect(h.stdout.contains("tokenbroker login work"))
    #expect(h.stderr == h.stdout)
  }

  @Test func anAzureContainerRegistryServedByANonAzureAccountIsAConfigurationError() async throws {
    let h = try CLIHarness(config: """
      [broker]
      store = file

      [account g]
      provider = google
      client-id = gid
      client-secret = gsecret
      hosts = *.azurecr.io
      """)
    #expect(await h.run(["get"], input: "myreg.azurecr.io", argv0: "docker-credential-tokenbroker") == 64)
    #expect(h.stdout.contains("'myreg.azurecr.io' is an Azure Container Registry"))
    // A configuration error stays an error, not the not-found phrase (Y12): the user must fix it.
    #expect(h.stdout.hasPrefix("tokenbroker: "))
    #expect(h.stderr == h.stdout)
  }

  @Test func emptyServerURL() async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(["get"], input: " \n", argv0: "docker-credential-tokenbroker") == 1)
    #expect(h.stdout == "no credentials server URL\n")
    #expect(h.stderr == h.stdout)
  }

  @Test func listShowsExactHostsWithUsernames() async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(["list"], argv0: "docker-credential-tokenbroker") == 0)
    #expect(
      h.stdout
        == #"{"https://dev.example.test":"dev-user","https://europe-west1-docker.pkg.dev":"tokenbroker","https://git.example.test":"tokenbroker","https://myreg.azurecr.io":"00000000-0000-0000-0000-000000000000","https://registry.example.test:5000":"tokenbroker"}"#
        + "\n")
  }

  /// Y13: `store` and `erase` for a registry an account serves are accepted and ignored (`az acr
  /// login` runs `docker login` for it).
  @Test(arguments: [
    ("store", #"{"ServerURL":"https://myreg.azurecr.io","Username":"00000000-0000-0000-0000-000000000000","Secret":"s"}"#),
    ("store", #"{"ServerURL":"europe-west1-docker.pkg.dev","Username":"u","Secret":"s"}"#),
    ("erase", "https://myreg.azurecr.io\n"),
  ])
  func Y13_storeAndEraseForAServedRegistryAreIgnored(action: String, input: String) async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run([action], input: input, argv0: "docker-credential-tokenbroker") == 0)
    #expect(h.stdout.isEmpty && h.stderr.isEmpty)
  }

  /// Y13: as docker's `credsStore`, a `docker login` to any other registry must fail with a line
  /// that says why, not report success and lose the password.
  @Test(arguments: [
    ("store", #"{"ServerURL":"https://index.docker.io/v1/","Username":"u","Secret":"S_SENTINEL"}"#),
    ("erase", "https://index.docker.io/v1/\n"),
  ])
  func Y13_storeAndEraseForAnyOtherRegistryAreRefused(action: String, input: String) async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run([action], input: input, argv0: "docker-credential-tokenbroker") == 1)
    #expect(h.stdout.hasPrefix("tokenbroker keeps no registry passwords, so the credential for 'index.docker.io' was not "))
    #expect(h.stdout.contains("credHelpers") && h.stdout.contains("credsStore"))
    #expect(h.stdout.split(separator: "\n").count == 1 && h.stderr == h.stdout)
    #expect(!h.stdout.contains("S_SENTINEL"))
  }

  @Test(arguments: [("store", ""), ("store", "not json S_SENTINEL"), ("store", #"{"Secret":"S_SENTINEL"}"#), ("erase", "")])
  func Y13_aRequestNamingNoRegistryIsRefused(action: String, input: String) async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run([action], input: input, argv0: "docker-credential-tokenbroker") == 1)
    #expect(h.stdout.contains("names no registry") && h.stderr == h.stdout)
    #expect(!h.stdout.contains("S_SENTINEL"))
  }

  @Test(arguments: [[], ["frob"], ["get", "extra"]])
  func usageOnStdoutWithStatus1(args: [String]) async throws {
    let h = try CLIHarness(config: Self.config)
    #expect(await h.run(args, argv0: "docker-credential-tokenbroker") == 1)
    #expect(h.stdout.contains("usage: docker-credential-tokenbroker"))
  }

  @Test func jsonStringsAreEscaped() {
    #expect(JSONText.encode("a\"b\\c\n/") == #""a\"b\\c\n/""#)
  }
}
