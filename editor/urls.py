"""URL routes. Every page needs a signed-in user except sign-in and ``/healthz``."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from editor.api import urls as api_urls
from editor.views import account, health, home

urlpatterns = [
    path("", home.home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/", account.account, name="account"),
    path("account/password/", account.change_password, name="account_password"),
    path("account/tokens/", account.new_token, name="account_tokens"),
    path(
        "account/tokens/<int:token_id>/revoke/",
        account.revoke_token,
        name="account_revoke_token",
    ),
    path("admin/", admin.site.urls),
    path("v1/", api_urls),
]
