package detect

import "strings"

// secretStore is one place a tool keeps its credentials, as the tool's own documentation
// names it, relative to the home folder of the user the tool runs as.
type secretStore struct {
	// path is the store, lower case, relative to the home folder; a trailing slash marks a
	// folder, which counts named on its own and with anything below it.
	path string
	// class groups stores for the report and the tests.
	class string
	// doc is where the tool documents the location.
	doc string
}

// secretStores is the catalogue of where tools keep their secrets (issue 26, det72). The
// rules above already read these under a home folder (home_dotfile, system_dir); the
// catalogue is for the same stores where a scanner's word list asks for them: at the
// filesystem or web root (/.aws/, /.docker/config.json) or one site folder down
// (/backup/.kube/config), which only the names the calib showed reached before. A store is
// named by the class, so a path no held-out set held counts too.
var secretStores = []secretStore{
	// Cloud provider command-line credentials.
	{".aws/", "cloud", "https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-files.html"},
	{".azure/", "cloud", "https://learn.microsoft.com/en-us/cli/azure/azure-cli-configuration"},
	{".config/gcloud/", "cloud", "https://cloud.google.com/sdk/docs/configurations"},
	{".gcloud/", "cloud", "https://cloud.google.com/sdk/docs/configurations (the pre-XDG location)"},
	{".oci/", "cloud", "https://docs.oracle.com/en-us/iaas/Content/API/Concepts/sdkconfig.htm"},
	{".config/doctl/", "cloud", "https://docs.digitalocean.com/reference/doctl/how-to/install/"},
	{".config/hcloud/", "cloud", "https://github.com/hetznercloud/cli/blob/main/docs/tutorials/setup-hcloud-cli.md"},
	{".databrickscfg", "cloud", "https://docs.databricks.com/en/dev-tools/auth/config-profiles.html"},
	{".boto", "cloud", "https://cloud.google.com/storage/docs/boto-gsutil"},
	{".s3cfg", "cloud", "https://s3tools.org/kb/item14.htm"},
	{".config/rclone/", "cloud", "https://rclone.org/docs/#config-config-file"},
	{".tugboat", "cloud", "https://github.com/petems/tugboat#configuration"},
	// Container registries and clusters.
	{".docker/", "containers", "https://docs.docker.com/reference/cli/docker/login/"},
	{".dockercfg", "containers", "https://docs.docker.com/reference/cli/docker/login/ (the legacy file)"},
	{".config/containers/auth.json", "containers", "containers-auth.json(5), https://github.com/containers/image/blob/main/docs/containers-auth.json.5.md"},
	{".kube/", "containers", "https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/"},
	{".config/helm/registry/", "containers", "https://helm.sh/docs/helm/helm_registry_login/"},
	// Package registries' publish tokens.
	{".npmrc", "package_auth", "https://docs.npmjs.com/cli/v10/configuring-npm/npmrc"},
	{".yarnrc.yml", "package_auth", "https://yarnpkg.com/configuration/yarnrc#npmAuthToken"},
	{".pypirc", "package_auth", "https://packaging.python.org/en/latest/specifications/pypirc/"},
	{".config/pypoetry/auth.toml", "package_auth", "https://python-poetry.org/docs/repositories/#configuring-credentials"},
	{".cargo/credentials", "package_auth", "https://doc.rust-lang.org/cargo/reference/config.html#credentials"},
	{".cargo/credentials.toml", "package_auth", "https://doc.rust-lang.org/cargo/reference/config.html#credentials"},
	{".gem/credentials", "package_auth", "https://guides.rubygems.org/command-reference/#gem-signin"},
	{".composer/auth.json", "package_auth", "https://getcomposer.org/doc/articles/authentication-for-private-packages.md"},
	{".config/composer/auth.json", "package_auth", "https://getcomposer.org/doc/articles/authentication-for-private-packages.md"},
	{".m2/settings.xml", "package_auth", "https://maven.apache.org/settings.html#servers"},
	{".m2/settings-security.xml", "package_auth", "https://maven.apache.org/guides/mini/guide-encryption.html"},
	{".gradle/gradle.properties", "package_auth", "https://docs.gradle.org/current/userguide/build_environment.html#sec:gradle_configuration_properties"},
	{".nuget/nuget/nuget.config", "package_auth", "https://learn.microsoft.com/en-us/nuget/reference/nuget-config-file#packagesourcecredentials"},
	// CI, forge and infrastructure tokens.
	{".config/gh/", "ci_tokens", "https://cli.github.com/manual/gh_auth_login"},
	{".config/hub", "ci_tokens", "https://hub.github.com/hub.1.html (CONFIGURATION)"},
	{".config/glab-cli/", "ci_tokens", "https://gitlab.com/gitlab-org/cli/-/blob/main/docs/source/config/_index.md"},
	{".circleci/cli.yml", "ci_tokens", "https://circleci.com/docs/local-cli/"},
	{".travis/config.yml", "ci_tokens", "https://github.com/travis-ci/travis.rb#readme"},
	{".terraform.d/credentials.tfrc.json", "ci_tokens", "https://developer.hashicorp.com/terraform/cli/config/config-file#credentials"},
	{".terraformrc", "ci_tokens", "https://developer.hashicorp.com/terraform/cli/config/config-file"},
	{".vault-token", "ci_tokens", "https://developer.hashicorp.com/vault/docs/commands/token-helper"},
	{".config/op/", "ci_tokens", "https://developer.1password.com/docs/cli/config-directories/"},
	// Version control credentials and the repository metadata a web root leaks.
	{".git-credentials", "vcs", "https://git-scm.com/docs/git-credential-store#_storage_format"},
	{".config/git/credentials", "vcs", "https://git-scm.com/docs/git-credential-store#_storage_format"},
	{".netrc", "vcs", "https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html"},
	{".git/", "vcs", "https://git-scm.com/docs/gitrepository-layout (config holds remote URLs, and with them any password)"},
	{".svn/", "vcs", "https://svnbook.red-bean.com/en/1.7/svn.serverconfig.netmodel.html#svn.serverconfig.netmodel.credcache"},
	{".hg/", "vcs", "https://www.mercurial-scm.org/doc/hgrc.5.html (the repository's hgrc, [auth])"},
	// Key material and keyrings.
	{".ssh/", "keys", "https://man.openbsd.org/ssh.1#FILES"},
	{".gnupg/", "keys", "https://www.gnupg.org/documentation/manuals/gnupg/GPG-Configuration.html"},
	{".password-store/", "keys", "https://www.passwordstore.org/"},
	{".local/share/keyrings/", "keys", "https://wiki.gnome.org/Projects/GnomeKeyring"},
	{".pki/nssdb/", "keys", "https://chromium.googlesource.com/chromium/src/+/main/docs/linux/cert_management.md"},
	// Browser profiles: saved logins, cookies and their keys.
	{".mozilla/firefox/", "browser", "https://support.mozilla.org/en-US/kb/profiles-where-firefox-stores-user-data"},
	{".config/google-chrome/", "browser", "https://chromium.googlesource.com/chromium/src/+/main/docs/user_data_dir.md"},
	{".config/chromium/", "browser", "https://chromium.googlesource.com/chromium/src/+/main/docs/user_data_dir.md"},
	{".thunderbird/", "browser", "https://support.mozilla.org/en-US/kb/profiles-where-thunderbird-stores-user-data"},
	// Environment files a tool loads into the shell, secrets among them.
	{".envrc", "env_files", "https://direnv.net/ (.envrc exports the project's variables, credentials included)"},
	// Deploy settings an editor or task runner keeps beside a site, with the server's password.
	{"sftp-config.json", "deploy", "https://codexns.io/products/sftp_for_sublime/settings"},
	{".ftpconfig", "deploy", "https://github.com/icetee/remote-ftp#readme"},
	{".remote-sync.json", "deploy", "https://github.com/yongkangchen/remote-sync#readme"},
	{".ftppass", "deploy", "https://github.com/zonak/grunt-ftp-deploy#authentication-parameters"},
	// Mail clients' passwords.
	{".fetchmailrc", "mail", "fetchmail(1), https://www.fetchmail.info/fetchmail-man.html#the-run-control-file"},
	{".msmtprc", "mail", "https://marlam.de/msmtp/msmtp.html#Authentication"},
	{".esmtprc", "mail", "esmtprc(5)"},
	{".muttrc", "mail", "https://www.mutt.org/doc/manual/#imap-pass"},
	// Web servers' password files, which a site's root leaks.
	{".htpasswd", "web_server", "https://httpd.apache.org/docs/2.4/programs/htpasswd.html"},
	{".htdigest", "web_server", "https://httpd.apache.org/docs/2.4/programs/htdigest.html"},
	// Database clients' passwords.
	{".pgpass", "database", "https://www.postgresql.org/docs/current/libpq-pgpass.html"},
	{".my.cnf", "database", "https://dev.mysql.com/doc/refman/8.0/en/option-files.html"},
	{".mylogin.cnf", "database", "https://dev.mysql.com/doc/refman/8.0/en/mysql-config-editor.html"},
	{".snowsql/config", "database", "https://docs.snowflake.com/en/user-guide/snowsql-config"},
	// Remote-access tools.
	{".anydesk/", "remote_access", "https://support.anydesk.com/knowledge/settings (the user's configuration folder, ~/.anydesk)"},
	{".vnc/passwd", "remote_access", "vncpasswd(1), https://tigervnc.org/doc/vncpasswd.html"},
	{".iceauthority", "remote_access", "iceauth(1): the ICE session's authorization cookies, as .Xauthority holds X11's"},
	// Shell and REPL histories: commands typed with their passwords and tokens.
	{".bash_history", "history", "bash(1), HISTFILE"},
	{".zsh_history", "history", "zshparam(1), HISTFILE"},
	{".sh_history", "history", "ksh(1), HISTFILE"},
	{".history", "history", "tcsh(1), histfile"},
	{".local/share/fish/fish_history", "history", "https://fishshell.com/docs/current/cmds/history.html"},
	{".python_history", "history", "https://docs.python.org/3/library/site.html#rlcompleter-config"},
	{".node_repl_history", "history", "https://nodejs.org/api/repl.html#persistent-history"},
	{".mysql_history", "history", "https://dev.mysql.com/doc/refman/8.0/en/mysql-logging.html"},
	{".psql_history", "history", "https://www.postgresql.org/docs/current/app-psql.html"},
	{".rediscli_history", "history", "https://redis.io/docs/latest/develop/tools/cli/"},
	{".dbshell", "history", "https://www.mongodb.com/docs/v4.4/mongo/#std-label-mongo-dbshell-file (the legacy mongo shell's history)"},
}

// homePrefixes are the ways a path names a home folder; secretStorePath strips one.
var homePrefixes = []string{"~/", "$home/", "/root/"}

// secretStorePath returns the catalogue entry a single absolute path names, or nil: the store
// straight under a home folder, the root, or one folder below the root that is not the
// operating system's (a site's /backup/, /admin/): /.aws/credentials, /.ssh,
// /backup/.kube/config, ~/.config/containers/auth.json. A project checkout (projectPath) and a
// test fixture pass: a project's own .git/ or .docker/ is its code.
func secretStorePath(t string) *secretStore {
	if len(t) < 3 || (t[0] != '/' && t[0] != '~' && t[0] != '$') || strings.ContainsAny(t, " \t\n;|&`'\"*?") || projectPath(t) || strings.Contains(t, "://") {
		return nil
	}
	p := t + "/"
	for _, d := range fixtureDirs {
		if strings.Contains(p, d) {
			return nil
		}
	}
	rest := ""
	for _, h := range homePrefixes {
		if strings.HasPrefix(t, h) {
			rest = t[len(h):]
			break
		}
	}
	for _, h := range []string{"/home/", "/users/"} {
		if u, ok := strings.CutPrefix(t, h); ok {
			if i := strings.IndexByte(u, '/'); i > 0 {
				rest = u[i+1:]
			}
			break
		}
	}
	if rest == "" && t[0] == '/' {
		rest = t[1:]
		if i := strings.IndexByte(rest, '/'); i > 0 && !strings.HasPrefix(rest, ".") {
			// One site folder down, not the operating system's.
			if osTopDirs[rest[:i]] {
				return nil
			}
			rest = rest[i+1:]
		}
	}
	if rest == "" {
		return nil
	}
	rest = strings.TrimSuffix(rest, "/")
	for i := range secretStores {
		s := &secretStores[i]
		if dir, ok := strings.CutSuffix(s.path, "/"); ok {
			if rest == dir || strings.HasPrefix(rest, s.path) {
				return s
			}
		} else if rest == s.path {
			return s
		}
	}
	return nil
}

// backupSuffixes are what editors and admins append to a copy of a file: the copy of a secret
// holds the secret.
var backupSuffixes = []string{"~", ".bak", ".old", ".orig", ".save", ".sav", ".swp", ".copy", ".backup", ".1"}

// backupStem returns t less a backup suffix when t is a single path (no white space, quote or
// shell syntax: a text that ends in "1.1" or "~" is not a copy of a file), or "".
func backupStem(t string) string {
	if strings.ContainsAny(t, " \t\n;|&`'\"") {
		return ""
	}
	for _, s := range backupSuffixes {
		if stem, ok := strings.CutSuffix(t, s); ok && len(stem) > 1 {
			return stem
		}
	}
	return ""
}
