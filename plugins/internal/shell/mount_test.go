package shell

import (
	"reflect"
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
