import BrokerCore
import Testing

@testable import BrokerStore

/// What each Secret Service answer becomes (README "Keyrings"): kwalletd's own wordings included.
@Suite struct GErrorMappingTests {
  static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"

  @Test func kwalletdWithoutTheQCAPluginsIsARefusedSessionNotAMissingService() {
    let e = GErrorMappingProbe.storeError(
      Self.invalidArgs, "createDLGroup failed: maybe libqca-ossl is missing", connecting: true)
    #expect(e == .sessionRefused(detail: "createDLGroup failed: maybe libqca-ossl is missing"))
    #expect(e.description.contains("libqca-qt5-2-plugins"))
    #expect(!e.description.contains("gnome-keyring"))
  }

  @Test func anyOtherErrorWhileConnectingIsStillUnavailable() {
    let e = GErrorMappingProbe.storeError("org.freedesktop.DBus.Error.Failed", "no", connecting: true)
    #expect(e == .unavailable(detail: "no"))
  }

  @Test func kwalletdsItemNotFoundIsAnItemGone() {
    #expect(GErrorMappingProbe.isNoSuchObject(Self.invalidArgs, "Can't find item at path /org/freedesktop/secrets/collection/kdewallet/3"))
    #expect(!GErrorMappingProbe.isNoSuchObject(Self.invalidArgs, "Invalid session"))
    #expect(GErrorMappingProbe.isNoSuchObject("org.freedesktop.Secret.Error.NoSuchObject", "gone"))
  }

  @Test func kwalletdRefusingAShortSessionKeyIsToldApart() {
    #expect(GErrorMappingProbe.isShortKeyRefused(Self.invalidArgs, "Client public key size is invalid"))
    #expect(!GErrorMappingProbe.isShortKeyRefused(Self.invalidArgs, "createDLGroup failed: maybe libqca-ossl is missing"))
    #expect(!GErrorMappingProbe.isShortKeyRefused("org.freedesktop.DBus.Error.Failed", "Client public key size is invalid"))
  }

  @Test func aSessionKeyTheServiceDerivedOtherwiseIsToldApartFromOtherFailures() {
    // kwalletd's answer to a new item it cannot decrypt, and libsecret's to a secret it cannot.
    let created = GErrorMappingProbe.storeError(
      "org.qtproject.QtDBus.Error.InvalidObjectPath", "Can't find session /org/freedesktop/secrets/session/7",
      connecting: false)
    #expect(isSessionKeyMismatch(created))
    #expect(isSessionKeyMismatch(.backend(detail: "Received invalid secret from the secret storage")))
    #expect(!isSessionKeyMismatch(GErrorMappingProbe.storeError(Self.invalidArgs, "Can't find item at path /x", connecting: false)))
    #expect(!isSessionKeyMismatch(.locked))
    #expect(!isSessionKeyMismatch(.unavailable(detail: "Can't find session /s")))
  }
}
