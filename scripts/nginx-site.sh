# Sourced by the nginx checks: runs docker/nginx.conf in a private nginx.
# run_site_nginx DIR LISTEN API STREAMS — nginx's files go under DIR; it listens on 127.0.0.1:LISTEN, and the
# replicas' API port (8080) and stream port (8081) become 127.0.0.1:API and 127.0.0.1:STREAMS. Sets nginx_pid.
run_site_nginx() {
    local dir=$1 listen=$2 api=$3 streams=$4 user="" nginx
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    sed -e "s/switchboard-[12]:8080/127.0.0.1:$api/" -e "s/switchboard-[12]:8081/127.0.0.1:$streams/" \
        -e "s/listen 80;/listen 127.0.0.1:$listen;/" docker/nginx.conf >"$dir/site.conf"
    [ "$(id -u)" -eq 0 ] && user="user root;"
    mkdir -p "$dir/tmp"
    cat >"$dir/nginx.conf" <<CONF
$user
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log;
events {}
http {
    access_log off;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    include $dir/site.conf;
}
CONF
    "$nginx" -t -q -c "$dir/nginx.conf" -p "$dir"
    "$nginx" -c "$dir/nginx.conf" -p "$dir" &
    nginx_pid=$!
}
