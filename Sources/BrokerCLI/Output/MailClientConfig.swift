import BrokerCore

/// What `mail setup ACCOUNT CLIENT` prints (README, "Mail clients"): a complete configuration for
/// the client, each the form `make check` runs against Debian's Dovecot (test_mail_setup.py), with
/// the client's own way to run a command for the token. The `--min-valid` of each command outlasts
/// what the client does with one token: mbsync keeps one for a whole sync and hangs when the
/// server refuses it mid-way, so it asks 30 minutes; the others ask 5.
///
/// SASL mechanism: XOAUTH2 for azure (Exchange Online offers no OAUTHBEARER), OAUTHBEARER (RFC
/// 7628) elsewhere, where the client has it (mbsync's SASL plugin on Debian 12,
/// libsasl2-modules-kdexoauth2, has XOAUTH2 only; neomutt refuses OAUTHBEARER tokens of 512 bytes
/// or more, so it uses XOAUTH2 too).
struct MailClientConfig {
  /// The clients `mail setup` knows, in the order `--help` lists them.
  static let clients = ["msmtp", "mbsync", "neomutt", "curl"]

  var account: String
  /// The mailbox's address: the SASL user and the sender.
  var user: String
  /// The tokenbroker the commands run, by absolute path where one is found (cron and a desktop
  /// session's mail client may have another PATH).
  var program: String
  var imap: MailServer
  var smtp: MailServer
  /// True for azure accounts: XOAUTH2 everywhere.
  var xoauth2Only: Bool
  /// The CA bundle the clients verify the servers with.
  var caFile = "/etc/ssl/certs/ca-certificates.crt"

  func tokenCommand(_ p: MailProtocol, minValid: Int) -> String {
    "\(program) token get \(account) --for \(p.rawValue) --min-valid \(minValid)"
  }

  /// The configuration text for `client`, or nil for one this does not know.
  func render(_ client: String) -> String? {
    switch client {
    case "msmtp": return msmtp
    case "mbsync": return mbsync
    case "neomutt": return neomutt
    case "curl": return curl
    default: return nil
    }
  }

  var msmtp: String {
    """
    # ~/.msmtprc (chmod 600), from 'tokenbroker mail setup \(account) msmtp'
    account \(account)
    host \(smtp.host)
    port \(smtp.port)
    tls on
    tls_starttls \(smtp.implicitTLS ? "off" : "on")
    tls_trust_file \(caFile)
    auth \(xoauth2Only ? "xoauth2" : "oauthbearer")
    user \(user)
    from \(user)
    passwordeval "\(tokenCommand(.smtp, minValid: 300))"

    account default : \(account)

    """
  }

  var mbsync: String {
    """
    # ~/.mbsyncrc, from 'tokenbroker mail setup \(account) mbsync'
    # XOAUTH2 comes from Cyrus SASL's plugin: apt install libsasl2-modules-kdexoauth2
    IMAPAccount \(account)
    Host \(imap.host)
    Port \(imap.port)
    User \(user)
    PassCmd "\(tokenCommand(.imap, minValid: 1800))"
    AuthMechs XOAUTH2
    SSLType \(imap.implicitTLS ? "IMAPS" : "STARTTLS")
    CertificateFile \(caFile)

    IMAPStore \(account)-remote
    Account \(account)

    MaildirStore \(account)-local
    Path ~/Mail/\(account)/
    Inbox ~/Mail/\(account)/INBOX
    SubFolders Verbatim

    Channel \(account)
    Far :\(account)-remote:
    Near :\(account)-local:
    Patterns *
    Create Near
    SyncState *

    """
  }

  var neomutt: String {
    let userInURL = user.replacingAll("@", with: "%40")
    return """
      # ~/.config/neomutt/neomuttrc, from 'tokenbroker mail setup \(account) neomutt'
      set from = "\(user)"
      set imap_user = "\(user)"
      set folder = "\(imap.implicitTLS ? "imaps" : "imap")://\(imap.host):\(imap.port)/"
      set spoolfile = "+INBOX"
      set imap_authenticators = "xoauth2"
      set imap_oauth_refresh_command = "\(tokenCommand(.imap, minValid: 300))"
      set smtp_url = "\(smtp.implicitTLS ? "smtps" : "smtp")://\(userInURL)@\(smtp.host):\(smtp.port)/"
      set smtp_authenticators = "xoauth2"
      set smtp_oauth_refresh_command = "\(tokenCommand(.smtp, minValid: 300))"
      set ssl_force_tls = yes
      set ssl_starttls = yes
      set certificate_file = "~/.cache/neomutt-certificates"
      set ssl_ca_certificates_file = "\(caFile)"

      """
  }

  var curl: String {
    """
    # from 'tokenbroker mail setup \(account) curl': list the mailboxes, then send a message (mail.txt)
    curl --cacert \(caFile) --user '\(user)' --oauth2-bearer "$(\(tokenCommand(.imap, minValid: 300)))" \\
      'imap\(imap.implicitTLS ? "s" : "")://\(imap.host):\(imap.port)/' -X 'LIST "" "*"'
    curl --cacert \(caFile) --user '\(user)' --oauth2-bearer "$(\(tokenCommand(.smtp, minValid: 300)))" \(smtp.implicitTLS ? "" : "--ssl-reqd ")\\
      'smtp\(smtp.implicitTLS ? "s" : "")://\(smtp.host):\(smtp.port)/' --mail-from '\(user)' --mail-rcpt '\(user)' --upload-file mail.txt

    """
  }
}
