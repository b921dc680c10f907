/// Config texts the agent's and the CLI's unit tests run commands with.
public enum TestConfigs {
  /// The plaintext file store and one azure account `work` serving `git.example.test`, whose
  /// authority is a port nothing listens on (a refresh fails at once).
  public static let fileStore = """
    [broker]
    store = file

    [account work]
    provider = azure
    client-id = cid
    authority = http://127.0.0.1:9
    hosts = git.example.test
    """
}
