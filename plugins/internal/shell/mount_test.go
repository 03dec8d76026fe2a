package shell

import (
	"reflect"
	"strings"
	"testing"
)

func TestBindMounts(t *testing.T) {
	for _, tc := range []struct {
		name string
		argv []string
		want map[string]string
	}{
		{"-v host:container", []string{"docker", "run", "--rm", "-v", "$HOME/.cache:/root/.cache", "img"}, map[string]string{"$HOME/.cache:/root/.cache": "$HOME/.cache"}},
		{"--volume=", []string{"podman", "run", "--volume=/srv/data:/data:ro", "img"}, map[string]string{"--volume=/srv/data:/data:ro": "/srv/data"}},
		{"--mount source", []string{"docker", "container", "create", "--mount", "type=bind,source=./d,target=/root/d", "img"}, map[string]string{"type=bind,source=./d,target=/root/d": "./d"}},
		{"a named volume has no host path", []string{"nerdctl", "run", "-v", "data:/var/lib/x", "img"}, map[string]string{"data:/var/lib/x": ""}},
		{"the container's command is not a mount", []string{"docker", "run", "img", "-v", "/root:/x"}, nil},
		{"not a run", []string{"docker", "cp", "-v", "/root:/x"}, nil},
		{"not a container CLI", []string{"tar", "-v", "/root:/x"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := BindMounts(tc.argv); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("BindMounts(%q) = %v, want %v", tc.argv, got, tc.want)
			}
		})
	}
}

func TestKeyUse(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want []int
	}{
		{[]string{"ssh", "-i", "$HOME/.ssh/id_rsa", "dev@host"}, []int{2}},
		{[]string{"scp", "-i", "k.pem", "k.pem", "x@host:/tmp/"}, []int{2}}, // the operand still counts
		{[]string{"ssh", "-o", "IdentityFile=$HOME/.ssh/id", "host"}, []int{2}},
		{[]string{"ssh", "-o", "StrictHostKeyChecking=no", "host"}, nil},
		{[]string{"ssh-add", "$HOME/.ssh/id"}, []int{1}},
		{[]string{"cp", "$HOME/.docker/config.json", "$HOME/.docker/config.json~"}, []int{1, 2}},
		{[]string{"cp", "-p", ".env", ".env.bak"}, []int{2, 3}},
		{[]string{"cp", "$HOME/.docker/config.json", "/tmp/config.json~"}, nil},
		{[]string{"cp", "-r", "$HOME/.ssh", "$HOME/.ssh.bak"}, nil},
		{[]string{"cp", "$HOME/.ssh/id_rsa", "$HOME/.ssh/id_rsa.bak", "/tmp/"}, nil},
		{[]string{"cp", "$HOME/.ssh/../.aws/credentials", "$HOME/.ssh/../.aws/credentials.bak"}, nil},
		{[]string{"kubectl", "--kubeconfig=$HOME/.kube/config", "get", "pods"}, []int{1}},
		{[]string{"chmod", "600", "$HOME/.ssh/id_rsa"}, []int{2}},
		{[]string{"chmod", "-R", "go-rwx", "$HOME/.ssh"}, []int{3}},
		{[]string{"chmod", "0400", "k.pem"}, []int{2}},
		{[]string{"chmod", "644", "$HOME/.ssh/id_rsa"}, nil},
		{[]string{"chmod", "4700", "x"}, nil},
		{[]string{"chmod", "o+r", "$HOME/.ssh/id_rsa"}, nil},
		{[]string{"cat", "$HOME/.ssh/id_rsa"}, nil},
		{[]string{"docker", "build", "--secret", "id=aws,src=$HOME/.aws/credentials", "."}, []int{3}},
		{[]string{"docker", "buildx", "build", "--ssh=default=$HOME/.ssh/id", "."}, []int{3}},
		{[]string{"docker", "run", "--secret", "x", "img"}, nil}, // not a build
		{[]string{"sudo", "chown", "$(id", "-u):$(id", "-g)", "$HOME/.kube/config"}, []int{5}},
		{[]string{"chown", "$USER", "$HOME/.ssh/id_rsa", "$HOME/.ssh/id_rsa.pub"}, []int{2, 3}},
		{[]string{"sudo", "-E", "chmod", "600", "$HOME/.ssh/id_rsa"}, []int{4}},
		{[]string{"chown", "mallory", "$HOME/.ssh/id_rsa"}, nil},
		{[]string{"chown", "$USER:mallory", "$HOME/.ssh/id_rsa"}, nil},
		{[]string{"chown", "--reference=/tmp/x", "$HOME/.ssh/id_rsa"}, nil},
		{[]string{"sudo", "cat", "$HOME/.ssh/id_rsa"}, nil},
		{[]string{"auditctl", "-w", "/etc/shadow", "-p", "wa"}, []int{2}},
		{[]string{"auditctl", "-a", "always,exit", "-F", "path=/etc/shadow", "-F", "perm=wa"}, []int{4}},
		{[]string{"auditctl", "-a", "exit,always", "-S", "openat", "-F", "dir=/etc/ssh", "-k", "k"}, []int{6}},
		{[]string{"sudo", "auditctl", "-w", "/etc/shadow"}, []int{3}},
		{[]string{"auditctl", "-W", "/etc/shadow", "-p", "wa"}, nil},
		{[]string{"auditctl", "-a", "never,exit", "-F", "path=/etc/shadow"}, nil},
		{[]string{"auditctl", "-D", "-w", "/etc/shadow"}, nil},
		{[]string{"auditctl", "-e", "0", "-w", "/etc/shadow"}, nil},
		{[]string{"auditctl", "-w"}, nil},
	} {
		t.Run(strings.Join(tc.argv, " "), func(t *testing.T) {
			if got := KeyUse(tc.argv); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("KeyUse(%q) = %v, want %v", tc.argv, got, tc.want)
			}
		})
	}
}

func TestCredentialPointer(t *testing.T) {
	for w, want := range map[string]bool{
		"KUBECONFIG=$HOME/.kube/config": true, "GOOGLE_APPLICATION_CREDENTIALS=key.json": true,
		"KEY=$HOME/.ssh/id_rsa": false, "$HOME/.kube/config": false, "KUBECONFIG": false,
		"DOTENV_PATH=./.env.local": true, "DOTENV_CONFIG_PATH=.env": true, "DOTENV=.env": false, "DOTENV_KEY=.env": false,
	} {
		if got := CredentialPointer(w); got != want {
			t.Errorf("CredentialPointer(%q) = %v, want %v", w, got, want)
		}
	}
}

// TestKeyDeploy: key files copied from root's folders into a service's configuration folder
// (issue 26, det59) are found; a key sent to a home, /tmp, a web root, a secret or account
// file, from a personal secret folder, by a climb, a variable or a bare glob is not.
func TestKeyDeploy(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want []int
	}{
		{[]string{"cp", "/root/ctfe/*.pem", "/etc/config/"}, []int{1}},
		{[]string{"sudo", "cp", "-p", "/etc/ssl/private/site.key", "/etc/ssl/certs/site.pem", "/etc/nginx/ssl/"}, []int{3, 4}},
		{[]string{"install", "-m", "600", "/root/ca/ca.key", "/etc/step/ca.key"}, []int{3, 4}},
		{[]string{"install", "-m", "4755", "/root/ca/ca.key", "/etc/step/ca.key"}, nil},
		{[]string{"cp", "/root/ctfe/*.pem", "/tmp/"}, nil},
		{[]string{"cp", "/root/ctfe/*.pem", "/var/www/html/"}, nil},
		{[]string{"cp", "/root/ctfe/*.pem", "$HOME/"}, nil},
		{[]string{"cp", "/root/ctfe/*.pem", "/etc/"}, nil},
		{[]string{"cp", "/root/ctfe/*.pem", "/etc/ssl/private/"}, nil},
		{[]string{"cp", "/root/k.pem", "/etc/sudoers.d/x"}, nil},
		{[]string{"cp", "/root/k.pem", "/etc/x/../../tmp/"}, nil},
		{[]string{"cp", "/root/*", "/etc/config/"}, nil},
		{[]string{"cp", "/root/.ssh/id_rsa.pem", "/etc/config/"}, nil},
		{[]string{"cp", "/root/.ssh/*.key", "/etc/config/"}, nil},
		{[]string{"cp", "/home/dev/k.pem", "/etc/config/"}, nil},
		{[]string{"cp", "$HOME/k.pem", "/etc/config/"}, nil},
		{[]string{"cp", "/root/$K", "/etc/config/"}, nil},
		{[]string{"cp", "/root/k.pub", "/etc/config/"}, nil},
		{[]string{"cp", "/etc/shadow", "/etc/config/"}, nil},
		{[]string{"cp", "-r", "/root/ctfe", "/etc/config/"}, nil},
		{[]string{"cp", "/root/ctfe/*.pem", "/etc/config/", "/tmp/x"}, nil},
		{[]string{"cat", "/root/k.pem", "/etc/config/"}, nil},
		{[]string{"cp", "/root/k.pem", "/etc/nginx/ssl"}, []int{1}},
		{[]string{"cp", "/root/k.pem", "/etc/config/k.txt"}, nil},
		{[]string{"cp", "/root/k.pem", "/etc/config/k.pem.bak"}, []int{1, 2}}, // still named as a key
	} {
		t.Run(strings.Join(tc.argv, " "), func(t *testing.T) {
			if got := KeyDeploy(tc.argv); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("KeyDeploy(%q) = %v, want %v", tc.argv, got, tc.want)
			}
		})
	}
}

// det62: a cloud CLI's whole credentials folder mounted into a run that names nothing that
// prints, copies or sends it gives the mount word; anything else gives none
func TestCredentialMounts(t *testing.T) {
	want := map[string]string{ // command: the mount word, or "" for none
		"docker run --rm -it -v ~/.aws:/root/.aws amazon/aws-cli s3 ls":                                                    "~/.aws:/root/.aws",
		"docker run --rm -v $HOME/.kube:/root/.kube:ro bitnami/kubectl get pods":                                           "$HOME/.kube:/root/.kube:ro",
		"podman run -v ~/.config/gcloud/:/root/.config/gcloud gcr.io/google.com/cloudsdktool/cloud-sdk gcloud config list": "~/.config/gcloud/:/root/.config/gcloud",
		"docker run --rm -v ~/.aws/credentials:/c amazon/aws-cli s3 ls":                                                    "",
		"docker run --rm -v ~/.ssh:/root/.ssh alpine ls":                                                                   "",
		"docker run --rm -v ~/.aws:/a alpine cat /a/credentials":                                                           "",
		"docker run --rm -v ~/.aws:/a alpine sh -c 'ls /a'":                                                                "",
		"docker run --rm -v ~/.aws:/a --entrypoint /bin/cat amazon/aws-cli /a/credentials":                                 "",
		"docker run --rm -v ~/.aws:/a amazon/aws-cli s3 cp /a/credentials s3://x/":                                         "",
		"docker run --rm -v ~/.aws/../.ssh:/a amazon/aws-cli s3 ls":                                                        "",
		"docker run --rm -v ~/.awsx:/a amazon/aws-cli s3 ls":                                                               "",
		"docker exec -v ~/.aws:/a c ls":                                                                                    "",
		"docker run --rm -v ~/.aws:/root/.aws amazon/aws-cli s3 sync /root/.aws s3://x/":                                   "",
		"docker run --rm -v ~/.aws:/root/.aws:ro amazon/aws-cli s3 sync /root/.aws/ s3://x/":                               "",
		"docker run --rm -v ~/.aws:/root/.aws amazon/aws-cli configure export-credentials":                                 "",
		"docker run --rm -v ~/.kube:/root/.kube bitnami/kubectl config view --raw":                                         "",
		"docker run --rm -v ~/.config/gcloud:/root/.config/gcloud cloud-sdk gcloud auth print-access-token":                "",
	}
	for cmd, w := range want {
		got := CredentialMounts(strings.Fields(cmd))
		if w == "" && len(got) > 0 || w != "" && (len(got) != 1 || got[0] != w) {
			t.Errorf("CredentialMounts(%q) = %q, want %q", cmd, got, w)
		}
	}
}
