// Package deploy holds no gateway code: it is the home of the deployment files (the systemd
// unit, the Grafana dashboard, the Prometheus alerts; the Dockerfile is at the repository root)
// and of LintDockerfile, the small Dockerfile checker its tests run (hadolint is not packaged
// in Debian). `palisade install` takes the unit from it (Unit).
package deploy
