# tokenbroker — see README.md.
#   make demo     install what is missing, build, and run the main job against the bundled emulator
#   make check    install the test dependencies and run every test (keyring tests in a private D-Bus session)
#   make deps     install the Debian packages the build and tests need (sudo when not root)
#   make install  release build, copied under $(DESTDIR)$(PREFIX) with links, man pages,
#                 shell completions and the systemd user units; make uninstall removes them
#   make deb      dist/tokenbroker_VERSION-1_ARCH.deb from the release build, checked with lintian;
#                 VERSION is scripts/version's, the one `tokenbroker version` prints
#                 (install it with: apt-get install ./dist/tokenbroker_VERSION-1_ARCH.deb)
#   make fuzz     every parser of outside input under libFuzzer, FUZZ_SECONDS (300) per target
#   make deb-check  make deb, then install, use as a new user, purge and check nothing is left

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR = $(DESTDIR)$(PREFIX)/bin
LIBEXECDIR = $(DESTDIR)$(PREFIX)/libexec/tokenbroker
MANDIR = $(DESTDIR)$(PREFIX)/share/man
BASHCOMPDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
# Debian's zsh searches /usr/local/share/zsh/site-functions, but for /usr only vendor-completions.
ifeq ($(PREFIX),/usr)
ZSHCOMPDIR = $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions
else
ZSHCOMPDIR = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
endif
FISHCOMPDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
# systemd looks for user units under PREFIX/lib/systemd/user for system prefixes, and under
# ~/.local/share/systemd/user for a per-user install; override with SYSTEMD_USER_UNIT_DIR.
ifeq ($(PREFIX),$(HOME)/.local)
SYSTEMD_USER_UNIT_DIR ?= $(HOME)/.local/share/systemd/user
else
SYSTEMD_USER_UNIT_DIR ?= $(PREFIX)/lib/systemd/user
endif
SYSTEMDUSERDIR = $(DESTDIR)$(SYSTEMD_USER_UNIT_DIR)
UNITS = $(wildcard contrib/systemd/tokenbroker.socket contrib/systemd/tokenbroker.service)
SWIFT ?= swift
PYTHON ?= python3

# Build: libsecret, libcurl, libqrencode and libsodium headers. Tests and demo: a real keyring on a private bus, git,
# curl, openssl for the emulator's certificates, and python3-dbus/gi for the fake Secret Service;
# mandoc (man page lint), man-db, bash-completion, zsh and fish (each completion script in its
# shell), python3-kubernetes (a real exec-plugin client for --format exec-credential), glewlwyd
# (a real OpenID Provider for the provider = oidc tests; they start their own on loopback), nginx
# (a real rate-limiting front, limit_req answering 429, before django-oauth-toolkit from PyPI);
# dpkg-dev and lintian for make deb (dpkg-shlibdeps, dpkg-gencontrol, Debian's package checks);
# docker-registry (distribution, with token authentication) and skopeo, a real registry and a real
# client for the Azure Container Registry exchange through docker-credential-tokenbroker;
# openssh-server and openssh-client for the agent forwarded over ssh -R (the tests start their own
# sshd on loopback); dovecot (IMAP, POP3 and submission, with passdb oauth2) and msmtp, a real mail
# server and a real client for the mail tokens (the tests start their own Dovecot on loopback);
# isync (mbsync, with Cyrus SASL's XOAUTH2 plugin) and neomutt, the other clients mail setup serves.
# keepassxc, and libkf5wallet-bin (kwalletd5) with libqca-qt5-2-plugins (its encrypted sessions),
# the other two Secret Service providers the store's tests run against
# (Tests/Integration/keyring_providers.py, on Qt's offscreen platform: no display needed).
DEPS = pkg-config libsecret-1-dev libcurl4-openssl-dev libqrencode-dev libsodium-dev rclone gnome-keyring dbus libsecret-tools \
       libglib2.0-bin git openssl curl python3 python3-dbus python3-gi python3-venv \
       mandoc man-db bash-completion zsh fish python3-kubernetes glewlwyd nginx dpkg-dev lintian \
       docker-registry skopeo openssh-server openssh-client dovecot-imapd dovecot-pop3d dovecot-submissiond msmtp \
       isync libsasl2-modules-kdexoauth2 neomutt gcc \
       keepassxc libkf5wallet-bin libqca-qt5-2-plugins dunst xvfb
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build release deps install uninstall deb deb-check demo check unit integration fuzz fidelity clean

all: build

build:
	$(SWIFT) build

# The front (tokenbroker) is a static executable in every build (Package.swift); the core gets
# the Swift runtime statically too, so the machine needs only libcurl and libsecret; with no
# $$ORIGIN run path, since there is no Swift library beside it to find. The Swift runtime's
# libstdc++ goes in statically as well: libstdc++.so.6 costs each start of the core (the agent's
# too) about 1,700 symbol bindings, a quarter of its instructions before main. The toolchain
# asks for -lstdc++, which the linker script in STATIC_CXX (searched before the system's
# directories) turns into libstdc++.a.
STATIC_CXX = .build/static-libstdc++
release:
	@mkdir -p $(STATIC_CXX) && echo 'INPUT(libstdc++.a)' > $(STATIC_CXX)/libstdc++.so
	$(SWIFT) build -c release --static-swift-stdlib --disable-local-rpath -Xlinker -L$(CURDIR)/$(STATIC_CXX)
	scripts/lint --front .build/release/tokenbroker
	scripts/lint --release-core .build/release/tokenbroker-core

deps:
	@missing=""; for p in $(DEPS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all packages present"; \
	else echo "deps: installing$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi

install: release
	install -d $(BINDIR) $(LIBEXECDIR) $(MANDIR)/man1 $(MANDIR)/man5 $(BASHCOMPDIR) $(ZSHCOMPDIR) $(FISHCOMPDIR)
	install -m 0755 .build/release/tokenbroker $(BINDIR)/tokenbroker
	scripts/lint --front $(BINDIR)/tokenbroker
	install -m 0755 .build/release/tokenbroker-core $(LIBEXECDIR)/tokenbroker-core
	ln -sf tokenbroker $(BINDIR)/git-credential-tokenbroker
	ln -sf tokenbroker $(BINDIR)/docker-credential-tokenbroker
	install -m 0644 man/tokenbroker.1 $(MANDIR)/man1/tokenbroker.1
	ln -sf tokenbroker.1 $(MANDIR)/man1/git-credential-tokenbroker.1
	ln -sf tokenbroker.1 $(MANDIR)/man1/docker-credential-tokenbroker.1
	install -m 0644 man/tokenbroker-config.5 $(MANDIR)/man5/tokenbroker-config.5
	install -m 0644 completions/tokenbroker.bash $(BASHCOMPDIR)/tokenbroker
	install -m 0644 completions/_tokenbroker $(ZSHCOMPDIR)/_tokenbroker
	install -m 0644 completions/tokenbroker.fish $(FISHCOMPDIR)/tokenbroker.fish
	@# The units name the installed programs: @bindir@ and @libexecdir@ become the real paths.
	$(if $(UNITS),install -d $(SYSTEMDUSERDIR))
	$(foreach u,$(UNITS),sed -e 's|@bindir@|$(PREFIX)/bin|g' -e 's|@libexecdir@|$(PREFIX)/libexec/tokenbroker|g' \
	  $(u) > $(SYSTEMDUSERDIR)/$(notdir $(u)) && chmod 0644 $(SYSTEMDUSERDIR)/$(notdir $(u));)

uninstall:
	rm -f $(BINDIR)/tokenbroker $(BINDIR)/git-credential-tokenbroker $(BINDIR)/docker-credential-tokenbroker
	rm -rf $(LIBEXECDIR)
	rm -f $(MANDIR)/man1/tokenbroker.1 $(MANDIR)/man5/tokenbroker-config.5
	rm -f $(MANDIR)/man1/git-credential-tokenbroker.1 $(MANDIR)/man1/docker-credential-tokenbroker.1
	rm -f $(BASHCOMPDIR)/tokenbroker $(ZSHCOMPDIR)/_tokenbroker $(FISHCOMPDIR)/tokenbroker.fish
	rm -f $(SYSTEMDUSERDIR)/tokenbroker.socket $(SYSTEMDUSERDIR)/tokenbroker.service

# The package is `make install DESTDIR=dist/... PREFIX=/usr`, stripped, with Debian's files
# added (scripts/deb says what and why); deb-check is the package part of scripts/check.
deb:
	scripts/deb

deb-check:
	scripts/check package

demo: deps build
	scripts/demo

check: deps
	scripts/check

# Parts of check, for development.
unit: build
	scripts/check unit
integration: build
	scripts/check integration
FUZZ_SECONDS ?= 300
fuzz:
	scripts/fuzz --time $(FUZZ_SECONDS)
# The emulator against MSAL Python (needs PyPI).
fidelity:
	Tests/Emulator/check_fidelity.sh

clean:
	rm -rf .build dist
